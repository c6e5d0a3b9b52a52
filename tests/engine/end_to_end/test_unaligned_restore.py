"""Restoring unaligned checkpoints: in-flight records restore only at the same parallelism.

A gated sink stops the job until every channel is full; an unaligned checkpoint is then
triggered, and its barriers overtake the queued records, which the checkpoint stores. The
job restores from it at its own parallelism, exactly once; at another parallelism the
restore is refused, saying what to do. A checkpoint without in-flight records, and a
savepoint (always aligned), restore at any parallelism.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import (
    CompletedCheckpoint,
    MemoryCheckpointStorage,
    RestoreError,
    StreamEnvironment,
)
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.savepoints import Topic, TopicSource
from tests.engine.jobs.unaligned import GatedCollectSink, checkpoint_when_full, filled_topic

RECORDS, BATCH, CAPACITY = 3_000, 16, 64


def tagging_job(
    topic: Topic,
    sink: CollectSink[Any],
    storage: MemoryCheckpointStorage,
    *,
    tags: int = 2,
    unaligned: bool = True,
) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, batch_size=BATCH, channel_capacity=CAPACITY)
    env.enable_checkpointing(None, unaligned=unaligned)  # checkpoints only when triggered
    env.set_checkpoint_storage(storage)
    (
        env.from_source(TopicSource(topic), uid="numbers")
        .map(topic.passed, uid="passed")
        .key_by(lambda n: n % 7)
        .map(lambda n: ("tagged", n), uid="tag", parallelism=tags)
        .sink_to(sink, uid="out", parallelism=tags)
    )
    return env


async def checkpoint_of_full_channels(
    storage: MemoryCheckpointStorage,
    sink: CollectSink[Any] | None = None,
    *,
    unaligned: bool = True,
) -> CompletedCheckpoint:
    """Run the job until its channels are full, checkpoint it, and cancel it.

    The sink's writes wait until the barriers have gone as far as they can; then it runs.
    """
    sink = sink or GatedCollectSink()
    assert isinstance(sink, GatedCollectSink)
    env = tagging_job(filled_topic(), sink, storage, unaligned=unaligned)
    return await checkpoint_when_full(env, sink, "tags")


async def restored_results(
    storage: MemoryCheckpointStorage, checkpoint: CompletedCheckpoint, *, tags: int
) -> list[Any]:
    topic = filled_topic()
    topic.close()
    sink: CollectSink[Any] = CollectSink()
    env = tagging_job(topic, sink, storage, tags=tags)
    with anyio.fail_after(10):
        await env.execute("tags", restore_from=checkpoint.location)
    return sink.results


async def test_an_unaligned_checkpoint_of_full_channels_stores_their_records() -> None:
    checkpoint = await checkpoint_of_full_channels(MemoryCheckpointStorage())

    assert checkpoint.statistics is not None
    assert checkpoint.statistics.unaligned
    assert checkpoint.statistics.persisted_in_flight > 0


async def test_an_unaligned_barrier_reaches_the_sink_ahead_of_the_full_channels() -> None:
    # The checkpoint commits what the sink wrote before its barrier: the batch each sink
    # subtask was writing when released, not the records queued in its channels.
    sink = GatedCollectSink()

    await checkpoint_of_full_channels(MemoryCheckpointStorage(), sink)

    assert 0 < len(sink.results) <= 2 * BATCH


async def test_an_aligned_barrier_reaches_the_sink_behind_the_full_channels() -> None:
    sink = GatedCollectSink()

    await checkpoint_of_full_channels(MemoryCheckpointStorage(), sink, unaligned=False)

    assert len(sink.results) >= 2 * CAPACITY  # each source waited on a full channel


async def test_it_restores_at_the_same_parallelism_with_each_record_once() -> None:
    storage = MemoryCheckpointStorage()
    checkpoint = await checkpoint_of_full_channels(storage)
    results = await restored_results(storage, checkpoint, tags=2)

    assert sorted(n for _, n in results) == list(range(RECORDS))


async def test_it_refuses_to_restore_at_another_parallelism_and_says_what_to_do() -> None:
    storage = MemoryCheckpointStorage()
    checkpoint = await checkpoint_of_full_channels(storage)

    with pytest.raises(RestoreError) as refused:
        await restored_results(storage, checkpoint, tags=3)

    assert str(refused.value) == (
        f"checkpoint {checkpoint.checkpoint_id} is unaligned and holds in-flight records on "
        "the channels from operator 'passed' (parallelism 2) to operator 'tag' (parallelism "
        "2), but the job runs them at parallelism 2 and 3; restore it at the parallelism it "
        "was taken at, or rescale through a savepoint (savepoints are aligned and hold no "
        "in-flight records)"
    )


async def test_an_unaligned_checkpoint_without_in_flight_records_restores_at_any_parallelism() -> (
    None
):
    storage, sink = MemoryCheckpointStorage(), GatedCollectSink()
    sink.release.set()
    topic = filled_topic()
    env = tagging_job(topic, sink, storage)
    with anyio.fail_after(10):
        async with env.start("tags") as job:
            await topic.all_read.wait()
            while len(sink.results) < RECORDS:  # idle: every record reached the sink
                await job.trigger_checkpoint()
            checkpoint = await job.trigger_checkpoint()
            await cancel_and_wait(job)
    assert checkpoint.statistics is not None
    assert checkpoint.statistics.persisted_in_flight == 0

    results = await restored_results(storage, checkpoint, tags=3)

    assert results == []  # everything was committed before; nothing is read twice
    assert sorted(n for _, n in sink.results) == list(range(RECORDS))


async def test_a_savepoint_of_a_job_with_unaligned_checkpoints_is_aligned_and_rescales(
    tmp_path: Any,
) -> None:
    storage, sink = MemoryCheckpointStorage(), GatedCollectSink()
    env = tagging_job(filled_topic(), sink, storage)
    with anyio.fail_after(10):
        async with env.start("tags") as job:
            await sink.writing.wait()
            await anyio.wait_all_tasks_blocked()
            sink.release.set()
            savepoint = await job.trigger_savepoint(str(tmp_path))
            record = job.metrics().checkpoints.latest_completed
            await cancel_and_wait(job)
    assert record is not None
    assert (record.unaligned, record.persisted_in_flight) == (False, 0)

    topic = filled_topic()
    topic.close()
    rescaled_sink: CollectSink[Any] = CollectSink()
    rescaled = tagging_job(topic, rescaled_sink, storage, tags=3)
    with anyio.fail_after(10):
        await rescaled.execute("tags", restore_from=savepoint)

    assert sorted(n for _, n in rescaled_sink.results) == list(range(RECORDS))
