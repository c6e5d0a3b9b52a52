"""Savepoint lifecycle: stop with one, move it, change the job around it, claim or not."""

from __future__ import annotations

import re
import shutil
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import (
    CheckpointError,
    GraphError,
    JobStatus,
    RestoreError,
    Sink,
    SinkContext,
    SinkWriter,
    StreamEnvironment,
)
from lockgate.engine.checkpointing.checksum import checksum_of
from lockgate.engine.checkpointing.messages import CheckpointFailureReason, StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.savepoints.format import decode_savepoint_state, encode_savepoint_state
from lockgate.engine.savepoints.values import ValueCodec
from tests.engine.jobs.async_io import wait_until
from tests.engine.jobs.savepoints import Topic, TopicSource, exists, has_metadata

KEYS, FIRST, MORE = 10, 100, 50


def events(per_key: int) -> list[tuple[int, int]]:
    return [(key, 1) for _ in range(per_key) for key in range(KEYS)]


def counting_job(
    topic: Topic, sink: CollectSink[Any], *, extra: bool = False, counts: bool = True
) -> StreamEnvironment:
    """Per key, the running count; ``extra`` adds stateless operators around it."""
    env = StreamEnvironment(parallelism=2, max_parallelism=16)
    env.enable_checkpointing()
    env.set_checkpoint_storage("memory://")
    stream = env.from_source(TopicSource(topic), uid="events").map(topic.passed)
    if extra:
        stream = stream.filter(lambda event: event[1] > 0).map(lambda event: event)
    if counts:
        stream = stream.key_by(lambda event: event[0]).reduce(
            lambda a, b: (a[0], a[1] + b[1]), uid="counts"
        )
    if extra:
        stream = stream.map(lambda event: (event[0], event[1]))
    stream.sink_to(sink, uid="out")
    return env


async def stopped_after_first(topic: Topic, sink: CollectSink[Any], target: Path) -> str:
    topic.append(events(FIRST), partition_of=lambda event: event[0])
    async with counting_job(topic, sink).start("counts") as job:
        await topic.all_read.wait()
        savepoint = await job.stop_with_savepoint(target.as_uri())
    assert job.status is JobStatus.FINISHED
    return savepoint


def totals_by_key(results: list[tuple[int, int]]) -> dict[int, list[int]]:
    running: dict[int, list[int]] = defaultdict(list)
    for key, total in results:
        running[key].append(total)
    return dict(running)


def assert_exact_running_counts(sink: CollectSink[Any], per_key: int) -> None:
    expected = {key: list(range(1, per_key + 1)) for key in range(KEYS)}
    assert totals_by_key(sink.results) == expected


async def test_stop_with_savepoint_commits_everything_and_a_restore_continues_exactly(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(4), CollectSink[Any]()
    savepoint = await stopped_after_first(topic, sink, tmp_path)
    assert_exact_running_counts(sink, FIRST)  # the stop savepoint committed all of it
    assert Path(savepoint).parent == tmp_path
    assert Path(savepoint).name.startswith("savepoint-counts-")

    topic.append(events(MORE), partition_of=lambda event: event[0])
    topic.close()
    await counting_job(topic, sink).execute("counts", restore_from=savepoint)

    assert_exact_running_counts(sink, FIRST + MORE)


async def test_a_savepoint_folder_moved_elsewhere_restores_from_its_new_place(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(4), CollectSink[Any]()
    savepoint = await stopped_after_first(topic, sink, tmp_path / "first")
    moved = tmp_path / "elsewhere" / "kept"
    moved.parent.mkdir()
    shutil.move(savepoint, moved)

    topic.append(events(MORE), partition_of=lambda event: event[0])
    topic.close()
    await counting_job(topic, sink).execute("counts", restore_from=str(moved / "_metadata"))

    assert not exists(savepoint)
    assert_exact_running_counts(sink, FIRST + MORE)


async def test_stateless_operators_may_be_added_and_removed_around_a_stateful_one(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(4), CollectSink[Any]()
    savepoint = await stopped_after_first(topic, sink, tmp_path)
    topic.append(events(MORE // 2), partition_of=lambda event: event[0])
    async with counting_job(topic, sink, extra=True).start("counts", restore_from=savepoint) as job:
        await topic.all_read.wait()
        second = await job.stop_with_savepoint(tmp_path.as_uri())

    topic.append(events(MORE - MORE // 2), partition_of=lambda event: event[0])
    topic.close()
    await counting_job(topic, sink).execute("counts", restore_from=second)

    assert_exact_running_counts(sink, FIRST + MORE)


async def test_state_of_a_removed_operator_fails_the_restore_unless_allowed_to_drop_it(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(4), CollectSink[Any]()
    savepoint = await stopped_after_first(topic, sink, tmp_path)
    topic.close()
    without_counts = counting_job(topic, CollectSink[Any](), counts=False)

    with pytest.raises(RestoreError, match=r"operator 'counts'.*allow_non_restored_state=True"):
        await without_counts.execute("counts", restore_from=savepoint)

    result = await without_counts.execute(
        "counts", restore_from=savepoint, allow_non_restored_state=True
    )
    assert result.status is JobStatus.FINISHED


async def test_no_claim_never_deletes_the_savepoint_and_claim_deletes_it_once_subsumed(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(4), CollectSink[Any]()
    savepoint = await stopped_after_first(topic, sink, tmp_path)
    kept = tmp_path / "kept"
    shutil.copytree(savepoint, kept)

    async with counting_job(topic, sink).start("counts", restore_from=savepoint) as job:
        await job.trigger_checkpoint()
        await job.trigger_checkpoint()
        assert has_metadata(savepoint)  # no_claim: the job never deletes it
        job.cancel()

    async with counting_job(topic, sink).start(
        "counts", restore_from=str(kept), claim_mode="claim"
    ) as job:
        assert has_metadata(kept)  # still needed until a checkpoint completes
        await job.trigger_checkpoint()
        assert not exists(kept)  # subsumed by the first checkpoint of the job that owns it
        job.cancel()
    assert has_metadata(savepoint)


async def test_an_unknown_claim_mode_is_refused() -> None:
    env = counting_job(Topic(1), CollectSink[Any]())

    with pytest.raises(ValueError, match=r"claim_mode must be 'no_claim'.*or 'claim'"):
        await env.execute("counts", claim_mode="steal")  # type: ignore[arg-type]


async def test_an_intermediate_savepoint_commits_nothing_and_the_next_checkpoint_does(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(2), CollectSink[Any]()
    topic.append(events(FIRST), partition_of=lambda event: event[0])
    async with counting_job(topic, sink).start("counts") as job:
        await topic.all_read.wait()
        savepoint = await job.trigger_savepoint(tmp_path.as_uri())
        assert sink.results == []  # as in Flink 1.15+: a savepoint commits no side effects
        assert job.status is JobStatus.RUNNING
        await job.trigger_checkpoint()
        # Each sink subtask commits when told the checkpoint completed, maybe after this
        # task resumed (trio runs tasks woken together in any order).
        await wait_until(lambda: len(sink.results) == KEYS * FIRST)
        assert_exact_running_counts(sink, FIRST)
        job.cancel()
    assert has_metadata(savepoint)


async def test_a_failed_stop_savepoint_leaves_the_job_running(tmp_path: Path) -> None:
    topic, sink = Topic(2), CollectSink[Any]()
    topic.append(events(FIRST), partition_of=lambda event: event[0])
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the savepoint folder would go")
    async with counting_job(topic, sink).start("counts") as job:
        await topic.all_read.wait()
        with pytest.raises(CheckpointError, match="could not be written"):
            await job.stop_with_savepoint(blocked.as_uri())
        assert job.status is JobStatus.RUNNING
        topic.append(events(MORE), partition_of=lambda event: event[0])
        await topic.all_read.wait()  # the sources were resumed
        savepoint = await job.stop_with_savepoint(tmp_path.as_uri())

    assert job.status is JobStatus.FINISHED
    assert_exact_running_counts(sink, FIRST + MORE)
    assert has_metadata(savepoint)


class FinishLog(Sink[Any]):
    """Logs which of its writers were told that their input ended (``finish``)."""

    def __init__(self) -> None:
        self.finished: list[int] = []

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _FinishLogWriter(self, context.subtask_index)


class _FinishLogWriter(SinkWriter[Any]):
    def __init__(self, log: FinishLog, index: int) -> None:
        self.log, self.index = log, index

    async def write(self, records: list[Any]) -> None:
        pass

    async def finish(self) -> None:
        self.log.finished.append(self.index)


@pytest.mark.parametrize("drain", [True, False])
async def test_stop_with_savepoint_and_drain_ends_the_input_before_the_last_snapshot(
    drain: bool, tmp_path: Path
) -> None:
    topic, sink, log = Topic(2), CollectSink[Any](), FinishLog()
    topic.append(events(FIRST), partition_of=lambda event: event[0])
    env = counting_job(topic, sink)
    env.from_source(TopicSource(Topic(1)), uid="idle").sink_to(log, uid="finish-log")
    async with env.start("counts") as job:
        await topic.all_read.wait()
        savepoint = await job.stop_with_savepoint(tmp_path.as_uri(), drain=drain)

    assert job.status is JobStatus.FINISHED
    assert_exact_running_counts(sink, FIRST)
    assert sorted(log.finished) == ([0, 1] if drain else [])  # drained: every input ended
    assert has_metadata(savepoint)


def test_a_stateful_operator_without_a_uid_is_refused_when_checkpointing_is_on() -> None:
    env = StreamEnvironment()
    env.enable_checkpointing()
    topic = Topic(1)
    env.from_source(TopicSource(topic), uid="events").key_by(lambda e: e).reduce(
        lambda a, b: a
    ).sink_to(CollectSink[Any](), uid="out")

    with pytest.raises(GraphError, match=r"operator 'reduce-\d+' \(reduce\) keeps state but"):
        env.plan()


def test_without_checkpointing_generated_uids_are_fine() -> None:
    env = StreamEnvironment()
    env.from_source(TopicSource(Topic(1))).key_by(lambda e: e).reduce(lambda a, b: a).sink_to(
        CollectSink[Any]()
    )

    assert len(env.plan().chains) >= 1


def _payload_ran(marker: str) -> int:
    """What the planted pickle calls when unpickled: leaves a marker file behind."""
    Path(marker).touch()
    return 0


class Planted:
    """Pickles to a call of ``_payload_ran``: code that runs when the value is read."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (_payload_ran, (str(self.marker),))


def plant_pickle(savepoint: str, marker: Path) -> None:
    """Rewrite one state file of ``savepoint`` to carry a pickle, with matching checksums."""
    folder = Path(savepoint)
    metadata = CheckpointMetadata.from_bytes((folder / "_metadata").read_bytes())
    handles = metadata.operators["counts"]
    first = handles.handles[0]
    assert first is not None
    path = folder / first.location
    snapshot = decode_savepoint_state(path.read_bytes(), ValueCodec(), location=str(path))
    snapshot.keyed.setdefault(0, {}).setdefault("reduced", {})[999] = Planted(marker)
    data = encode_savepoint_state(snapshot, ValueCodec(allow_pickle=True))
    path.write_bytes(data)
    planted = StateHandle(first.location, len(data), checksum_of(data))
    operators = dict(metadata.operators)
    operators["counts"] = OperatorStateHandles(handles.parallelism, (planted, *handles.handles[1:]))
    (folder / "_metadata").write_bytes(replace(metadata, operators=operators).to_bytes())


async def test_a_savepoint_altered_to_carry_a_pickle_is_refused_and_the_payload_never_runs(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(4), CollectSink[Any]()
    savepoint = await stopped_after_first(topic, sink, tmp_path / "savepoints")
    marker = tmp_path / "payload-ran"
    plant_pickle(savepoint, marker)
    topic.close()

    with pytest.raises(RestoreError, match="pickle") as refused:
        await counting_job(topic, sink).execute("counts", restore_from=savepoint)

    assert "counts" in str(refused.value) or savepoint in str(refused.value)
    assert not exists(marker)
    trusting = counting_job(topic, sink)
    trusting.allow_pickle_in_savepoints()
    await trusting.execute("counts", restore_from=savepoint)
    assert exists(marker)  # the same file, read with pickle allowed, does run it


async def test_a_savepoint_in_memory_is_refused_before_anything_is_written() -> None:
    topic = Topic(1)
    async with counting_job(topic, CollectSink[Any]()).start("counts") as job:
        with pytest.raises(ValueError, match="a savepoint must outlive the job"):
            await job.trigger_savepoint("memory://")
        with pytest.raises(ValueError, match="relative path"):
            await job.stop_with_savepoint("savepoints")
        assert not job.status.is_terminal
        job.cancel()


class Opaque:
    """A value savepoints cannot encode unless its type is registered."""

    def __init__(self, count: int) -> None:
        self.count = count


async def test_state_the_savepoint_format_cannot_encode_fails_the_savepoint_not_the_job(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(1), CollectSink[Any]()
    topic.append(events(3), partition_of=lambda event: event[0])
    env = StreamEnvironment(parallelism=1)
    env.enable_checkpointing()
    env.from_source(TopicSource(topic), uid="events").map(topic.passed).key_by(
        lambda event: event[0]
    ).reduce(lambda a, b: (a[0], Opaque(1)), uid="opaque").sink_to(sink, uid="out")
    async with env.start("opaque") as job:
        await topic.all_read.wait()
        with pytest.raises(CheckpointError) as refused:
            await job.trigger_savepoint(tmp_path.as_uri())
        assert refused.value.reason is CheckpointFailureReason.UNENCODABLE_STATE
        message = str(refused.value)
        assert re.search(r"subtask '[^']*opaque[^']*' 1/1 declined it", message)
        assert "Opaque" in message and "register_type" in message
        assert not job.status.is_terminal
        await job.trigger_checkpoint()  # checkpoints pickle: they go on working
        job.cancel()
