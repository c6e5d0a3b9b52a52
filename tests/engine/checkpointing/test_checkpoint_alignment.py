"""Barrier alignment at runtime, with two inputs: an exactly-once checkpoint holds in its
keyed state exactly the records before its barriers; at-least-once lets records after a
barrier into the state, so a job restored from it counts them twice.

The interleaving is forced, not hoped for. A stalled sink backpressures the counter until
its channel from source B is full and B's subtask waits to write; a checkpoint is triggered,
so source A (idle at a closed gate) sends its barrier at once while B cannot; A's gate then
opens, so records after A's barrier queue up; only then does the sink resume. The counter
meets A's barrier, then A's later records, long before B's barrier.
"""

from __future__ import annotations

from collections import defaultdict

import anyio

from lockgate.connectors import CollectSink
from lockgate.engine import (
    CheckpointingMode,
    CompletedCheckpoint,
    JobClient,
    MemoryCheckpointStorage,
    Sink,
    StreamEnvironment,
)
from tests.engine.jobs.checkpoints import (
    Gate,
    GatedSource,
    ListeningCounter,
    NotificationLog,
    StalledSink,
    cancel_and_wait,
)

A_RECORDS, B_RECORDS = 1_000, 2_000
Count = tuple[str, int]


def tagged_counts_job(
    sink: Sink[Count],
    storage: MemoryCheckpointStorage,
    mode: CheckpointingMode,
    *,
    a: Gate,
    b: Gate,
) -> StreamEnvironment:
    """Sources a (gated before its first record) and b -> union -> count per source."""
    env = StreamEnvironment(batch_size=32, channel_capacity=128)
    env.enable_checkpointing(mode=mode)
    env.set_checkpoint_storage(storage)
    a_numbers = env.from_source(GatedSource(A_RECORDS, gate_at=0, gate=a), uid="a").map(
        lambda number: ("a", number), uid="tag-a"
    )
    b_numbers = env.from_source(
        GatedSource(B_RECORDS, gate_at=B_RECORDS // 2, gate=b), uid="b"
    ).map(lambda number: ("b", number), uid="tag-b")
    (
        a_numbers.union(b_numbers)
        .key_by(lambda tagged: tagged[0])
        .process(ListeningCounter(NotificationLog()), uid="counts")
        .sink_to(sink, uid="out")
    )
    return env


async def trigger(job: JobClient, completed: list[CompletedCheckpoint]) -> None:
    completed.append(await job.trigger_checkpoint())


async def checkpoint_with_records_behind_a_barrier(
    storage: MemoryCheckpointStorage, mode: CheckpointingMode
) -> CompletedCheckpoint:
    a, b, sink = Gate(), Gate(), StalledSink()
    env = tagged_counts_job(sink, storage, mode, a=a, b=b)
    completed: list[CompletedCheckpoint] = []
    with anyio.fail_after(10):
        async with env.start("counts") as job:
            await a.reached.wait()
            await sink.writing.wait()
            await anyio.wait_all_tasks_blocked()  # b's channel is full, b waits to write
            async with anyio.create_task_group() as group:
                group.start_soon(trigger, job, completed)
                await anyio.wait_all_tasks_blocked()  # a has sent its barrier
                a.opened.set()
                await anyio.wait_all_tasks_blocked()  # a's later records are queued
                sink.release.set()
            await cancel_and_wait(job)
    return completed[0]


async def final_counts_after_restore(mode: CheckpointingMode) -> dict[str, int]:
    storage = MemoryCheckpointStorage()
    checkpoint = await checkpoint_with_records_behind_a_barrier(storage, mode)
    sink: CollectSink[Count] = CollectSink()
    opened = Gate(opened=True)
    env = tagged_counts_job(sink, storage, mode, a=opened, b=opened)

    with anyio.fail_after(10):
        await env.execute("counts", restore_from=checkpoint.location)

    final: dict[str, int] = defaultdict(int)
    for tag, count in sink.results:
        final[tag] = max(final[tag], count)
    return dict(final)


async def test_exactly_once_keeps_records_after_a_barrier_out_of_its_checkpoint() -> None:
    final = await final_counts_after_restore(CheckpointingMode.EXACTLY_ONCE)

    assert final == {"a": A_RECORDS, "b": B_RECORDS}


async def test_at_least_once_lets_records_after_a_barrier_into_its_checkpoint() -> None:
    final = await final_counts_after_restore(CheckpointingMode.AT_LEAST_ONCE)

    assert final["a"] > A_RECORDS, "records after a's barrier were not counted twice"
    assert final["b"] >= B_RECORDS
