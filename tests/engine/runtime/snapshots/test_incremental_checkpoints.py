"""Incremental checkpoints of the memory backend: deltas, shared files, restore from a chain."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import (
    CheckpointError,
    CompletedCheckpoint,
    FileSystemCheckpointStorage,
    StreamEnvironment,
    read_snapshot,
)
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.runtime.snapshots.incremental import FULL_SNAPSHOT_EVERY
from tests.engine.jobs.async_io import wait_until
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.savepoints import Topic, TopicSource

KEYS = 1_000


def counts_job(
    topic: Topic, sink: CollectSink[Any], storage: Path, *, incremental: bool = True
) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, max_parallelism=32)
    env.enable_checkpointing(max_retained=1)
    env.set_checkpoint_storage(storage.as_uri())
    env.set_state_backend("memory", incremental=incremental)
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed)
        .key_by(lambda event: event[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="out")
    )
    return env


def touch(topic: Topic, keys: range) -> None:
    topic.append([(key, 1) for key in keys], partition_of=lambda event: event[0])


def counts_size(completed: CompletedCheckpoint) -> int:
    return completed.metadata.operators["counts"].state_size


def shared_files(storage: Path) -> set[str]:
    return {path.name for path in (storage / "counts" / "shared").iterdir()}


def shared_of(completed: CompletedCheckpoint) -> set[str]:
    return {
        Path(file.location).name
        for handle in completed.metadata.operators["counts"].handles
        if handle is not None
        for file in handle.shared_files
    }


def counts_of(sink: CollectSink[Any]) -> dict[int, int]:
    latest: dict[int, int] = defaultdict(int)
    for key, count in sink.results:
        latest[key] = max(latest[key], count)
    return dict(latest)


async def test_a_checkpoint_after_a_few_changes_writes_only_those_keys(tmp_path: Path) -> None:
    topic, sink, storage = Topic(2), CollectSink[Any](), tmp_path / "checkpoints"
    touch(topic, range(KEYS))
    async with counts_job(topic, sink, storage).start("counts") as job:
        await topic.all_read.wait()
        full = await job.trigger_checkpoint()
        touch(topic, range(10))
        await topic.all_read.wait()
        delta = await job.trigger_checkpoint()
        await cancel_and_wait(job)

    assert counts_size(delta) * 10 < counts_size(full)
    handles = [h for h in delta.metadata.operators["counts"].handles if h is not None]
    assert all(handle.shared and handle.is_shared for handle in handles)  # built on the full
    full_files = {h.location for h in full.metadata.operators["counts"].handles if h}
    assert {s.location for h in handles for s in h.shared} == full_files
    assert len(shared_files(storage)) == 4  # the full and the delta, of both subtasks


async def test_a_job_resumes_exactly_from_a_chain_of_deltas(tmp_path: Path) -> None:
    topic, sink, storage = Topic(2), CollectSink[Any](), tmp_path / "checkpoints"
    touch(topic, range(KEYS))
    async with counts_job(topic, sink, storage).start("counts") as job:
        for round_ in range(4):
            await topic.all_read.wait()
            await job.trigger_checkpoint()
            touch(topic, range(round_ * 10, round_ * 10 + 25))
        await topic.all_read.wait()
        last = await job.trigger_checkpoint()
        await cancel_and_wait(job)
    assert all(len(h.shared) == 4 for h in last.metadata.operators["counts"].handles if h)

    touch(topic, range(KEYS))
    topic.close()
    await counts_job(topic, sink, storage).execute("counts", restore_from="latest")

    expected = {key: 2 + sum(r * 10 <= key < r * 10 + 25 for r in range(4)) for key in range(KEYS)}
    assert counts_of(sink) == expected
    assert len(sink.results) == sum(expected.values())  # each update committed once


async def test_a_checkpoint_taken_while_no_record_came_restores_the_whole_state(
    tmp_path: Path,
) -> None:
    topic, sink, storage = Topic(2), CollectSink[Any](), tmp_path / "checkpoints"
    touch(topic, range(KEYS))
    async with counts_job(topic, sink, storage).start("counts") as job:
        await topic.all_read.wait()
        await job.trigger_checkpoint()
        idle = await job.trigger_checkpoint()  # deltas without changes
        await cancel_and_wait(job)
    assert all(h is not None and h.shared for h in idle.metadata.operators["counts"].handles)

    touch(topic, range(KEYS))
    topic.close()
    await counts_job(topic, sink, storage).execute("counts", restore_from="latest")

    assert counts_of(sink) == dict.fromkeys(range(KEYS), 2)


async def test_a_delta_after_a_checkpoint_without_changes_restores_exactly(
    tmp_path: Path,
) -> None:
    topic, sink, storage = Topic(2), CollectSink[Any](), tmp_path / "checkpoints"
    touch(topic, range(KEYS))
    async with counts_job(topic, sink, storage).start("counts") as job:
        await topic.all_read.wait()
        await job.trigger_checkpoint()
        await job.trigger_checkpoint()  # no change: it still references the first one's files
        touch(topic, range(10))
        await topic.all_read.wait()
        await job.trigger_checkpoint()
        await cancel_and_wait(job)

    topic.close()
    await counts_job(topic, sink, storage).execute("counts", restore_from="latest")

    assert counts_of(sink) == {key: 2 if key < 10 else 1 for key in range(KEYS)}


async def test_shared_files_are_deleted_once_no_retained_checkpoint_uses_them(
    tmp_path: Path,
) -> None:
    topic, sink, storage = Topic(1), CollectSink[Any](), tmp_path / "checkpoints"
    touch(topic, range(100))
    env = StreamEnvironment(parallelism=1)
    env.enable_checkpointing(max_retained=1)
    env.set_checkpoint_storage(storage.as_uri())
    env.set_state_backend("memory", incremental=True)
    env.from_source(TopicSource(topic), uid="events").map(topic.passed).key_by(
        lambda e: e[0]
    ).reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts").sink_to(sink, uid="out")
    chains = []
    async with env.start("counts") as job:
        for round_ in range(FULL_SNAPSHOT_EVERY + 2):
            touch(topic, range(round_, round_ + 3))
            await topic.all_read.wait()
            completed = await job.trigger_checkpoint()
            chains.append(completed.metadata.operators["counts"].handles[0])
        await cancel_and_wait(job)

    assert [len(handle.shared) for handle in chains] == [
        *range(FULL_SNAPSHOT_EVERY),
        0,
        1,
    ]  # a full snapshot starts a new chain after FULL_SNAPSHOT_EVERY files
    live = {Path(handle.location).name for handle in chains[-1].shared_files}
    assert shared_files(storage) == live  # the old chain was deleted once subsumed


async def test_without_incremental_checkpoints_nothing_goes_to_the_shared_folder(
    tmp_path: Path,
) -> None:
    topic, sink, storage = Topic(2), CollectSink[Any](), tmp_path / "checkpoints"
    touch(topic, range(KEYS))
    async with counts_job(topic, sink, storage, incremental=False).start("counts") as job:
        await topic.all_read.wait()
        first = await job.trigger_checkpoint()
        touch(topic, range(10))
        await topic.all_read.wait()
        second = await job.trigger_checkpoint()
        await cancel_and_wait(job)

    assert counts_size(second) == counts_size(first)
    assert not (storage / "counts" / "shared").exists()


class FailingSourceState(FileSystemCheckpointStorage):
    """Filesystem storage whose write of the source's positions fails at checkpoint ``fail_at``."""

    def __init__(self, base: Path, fail_at: int) -> None:
        super().__init__(base)
        self.fail_at = fail_at
        self.failed = 0

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        if checkpoint_id == self.fail_at and name.startswith("events-"):
            self.failed += 1
            raise OSError("the disk is full")
        return await super().write_state(job, checkpoint_id, name, data)


async def test_files_of_an_aborted_incremental_checkpoint_are_deleted(tmp_path: Path) -> None:
    topic, sink, folder = Topic(2), CollectSink[Any](), tmp_path / "checkpoints"
    storage = FailingSourceState(folder, fail_at=2)
    touch(topic, range(KEYS))
    env = counts_job(topic, sink, folder)
    env.set_checkpoint_storage(storage)
    async with env.start("counts") as job:
        await topic.all_read.wait()
        await job.trigger_checkpoint()
        touch(topic, range(10))
        await topic.all_read.wait()
        with pytest.raises(CheckpointError):
            await job.trigger_checkpoint()
        touch(topic, range(10, 20))
        await topic.all_read.wait()
        last = await job.trigger_checkpoint()
        # a subtask's write for checkpoint 2 may end after checkpoint 3 completed; its late
        # acknowledgement then deletes what it wrote, while the job runs
        await wait_until(lambda: shared_files(folder) == shared_of(last))
        await cancel_and_wait(job)

    assert storage.failed >= 1
    assert shared_files(folder) == shared_of(last)  # nothing of checkpoint 2 is left behind


async def test_the_reader_shows_an_incremental_checkpoint_whole(tmp_path: Path) -> None:
    topic, sink, storage = Topic(2), CollectSink[Any](), tmp_path / "checkpoints"
    touch(topic, range(KEYS))
    async with counts_job(topic, sink, storage).start("counts") as job:
        await topic.all_read.wait()
        await job.trigger_checkpoint()
        touch(topic, range(10))
        await topic.all_read.wait()
        delta = await job.trigger_checkpoint()
        await cancel_and_wait(job)
    assert all(h.shared for h in delta.metadata.operators["counts"].handles if h)

    contents = await read_snapshot(delta.location, allow_pickle=True)

    counts = contents.operators["counts"].keyed["reduced"]
    assert counts == {key: (key, 2 if key < 10 else 1) for key in range(KEYS)}
