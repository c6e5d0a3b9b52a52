"""Incremental checkpoints of the RocksDB backend: SST files uploaded once, shared, restored."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    CheckpointError,
    CompletedCheckpoint,
    KeyedProcessFunction,
    ListStateDescriptor,
    MapStateDescriptor,
    ProcessContext,
    RestartStrategy,
    RuntimeContext,
    StreamEnvironment,
)
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.storage import FileSystemCheckpointStorage
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.rocksdb import (
    KEYS,
    checkpointed_twice,
    counts_job,
    counts_of,
    leftovers,
    shared_folder,
    shared_of,
    touch,
)
from tests.engine.jobs.savepoints import Topic

MAX_ROUNDS = 40  # rounds until a compaction replaced a file; one happens every ~4 rounds


class MainFileFails(FileSystemCheckpointStorage):
    """Filesystem storage that refuses the main state files of one checkpoint."""

    def __init__(self, base_path: Path, checkpoint_id: int) -> None:
        super().__init__(base_path)
        self.checkpoint_id = checkpoint_id
        self.refused = 0

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        if checkpoint_id == self.checkpoint_id and name.startswith("counts-"):
            self.refused += 1
            raise OSError(f"injected failure writing {name}")
        return await super().write_state(job, checkpoint_id, name, data)


def written(completed: CompletedCheckpoint, previous: CompletedCheckpoint | None) -> int:
    """Bytes the checkpoint wrote for ``counts``: its main files and the new shared files."""
    before = shared_of(previous) if previous else {}
    new = sum(size for location, size in shared_of(completed).items() if location not in before)
    return completed.metadata.operators["counts"].state_size + new


def local_checkpoints(tmp_path: Path) -> list[Path]:
    """The RocksDB checkpoint folders left beside the databases."""
    folders = (tmp_path / "databases").glob("*-checkpoints")
    return [entry for folder in folders for entry in folder.iterdir()]


async def test_after_a_full_first_checkpoint_a_change_of_one_percent_uploads_only_new_ssts(
    tmp_path: Path,
) -> None:
    topic = Topic(2)
    touch(topic, range(KEYS))
    env = counts_job(topic, CollectSink(), tmp_path, backend="rocksdb-incremental")
    async with env.start("counts") as job:
        await topic.all_read.wait()
        first = await job.trigger_checkpoint()
        touch(topic, range(KEYS // 100))
        await topic.all_read.wait()
        second = await job.trigger_checkpoint()
        await cancel_and_wait(job)

    assert written(second, first) * 10 < written(first, None)
    assert set(shared_of(first)) < set(shared_of(second))  # the first's SSTs are reused
    assert all(location.endswith(".sst") for location in shared_of(second))


async def test_shared_sst_files_are_deleted_once_no_retained_checkpoint_uses_them(
    tmp_path: Path,
) -> None:
    topic, uploaded = Topic(1), set[str]()
    touch(topic, range(KEYS))
    env = counts_job(topic, CollectSink(), tmp_path, backend="rocksdb-incremental", parallelism=1)
    async with env.start("counts") as job:
        for round_ in range(MAX_ROUNDS):
            touch(topic, range(round_ * 300, round_ * 300 + 300))
            await topic.all_read.wait()
            live = {Path(location).name for location in shared_of(await job.trigger_checkpoint())}
            assert shared_folder(tmp_path) == live
            uploaded |= live
            if uploaded - live:
                break
        await cancel_and_wait(job)

    assert uploaded - live, "no compaction replaced an SST file; nothing could be deleted"


async def test_local_rocksdb_checkpoints_are_deleted_once_uploaded(tmp_path: Path) -> None:
    topic = Topic(2)
    touch(topic, range(1_000))
    env = counts_job(topic, CollectSink(), tmp_path, backend="rocksdb-incremental")
    async with env.start("counts") as job:
        await topic.all_read.wait()
        await job.trigger_checkpoint()
        assert local_checkpoints(tmp_path) == []
        await cancel_and_wait(job)

    assert leftovers(tmp_path / "databases") == []


@pytest.mark.parametrize("parallelism", [2, 3])
async def test_a_job_resumes_exactly_from_an_incremental_rocksdb_checkpoint(
    tmp_path: Path, parallelism: int
) -> None:
    topic, sink = Topic(2), CollectSink[Any]()
    await checkpointed_twice(topic, sink, tmp_path, "rocksdb-incremental")

    touch(topic, range(KEYS))
    topic.close()
    env = counts_job(topic, sink, tmp_path, backend="rocksdb-incremental", parallelism=parallelism)
    await env.execute("counts", restore_from="latest")

    expected = {key: 3 if key < KEYS // 100 else 2 for key in range(KEYS)}
    assert counts_of(sink) == expected
    assert len(sink.results) == sum(expected.values())  # each update committed once


async def checkpointed_until_compacted(
    topic: Topic, sink: CollectSink[Any], tmp_path: Path, **compaction: Any
) -> int:
    """Touch 300 more keys and checkpoint until a compaction replaced an uploaded file.

    Returns how many keys were touched (counted twice); cancels the job after that checkpoint.
    """
    touch(topic, range(KEYS))
    env = counts_job(topic, sink, tmp_path, backend="rocksdb-incremental", **compaction)
    uploaded: set[str] = set()
    async with env.start("counts") as job:
        for touched in range(300, MAX_ROUNDS * 300, 300):
            touch(topic, range(touched - 300, touched))
            await topic.all_read.wait()
            live = set(shared_of(await job.trigger_checkpoint()))
            if uploaded - live:
                break
            uploaded = live
        await cancel_and_wait(job)
    assert uploaded - live, "no compaction replaced an uploaded file: the restore proves less"
    return touched


async def test_a_job_resumes_exactly_from_incremental_checkpoints_of_universal_compaction(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(2), CollectSink[Any]()
    universal = {"compaction_style": "universal", "level0_compaction_trigger": 2}
    touched = await checkpointed_until_compacted(topic, sink, tmp_path, **universal)

    touch(topic, range(KEYS))
    topic.close()
    env = counts_job(
        topic, sink, tmp_path, backend="rocksdb-incremental", parallelism=3, **universal
    )
    await env.execute("counts", restore_from="latest")

    expected = {key: 3 if key < touched else 2 for key in range(KEYS)}
    assert counts_of(sink) == expected
    assert len(sink.results) == sum(expected.values())  # each update committed once


async def test_below_its_level0_trigger_no_checkpoint_replaces_a_file_an_earlier_one_uploaded(
    tmp_path: Path,
) -> None:
    topic, shared = Topic(1), list[set[str]]()
    touch(topic, range(KEYS))
    env = counts_job(
        topic,
        CollectSink(),
        tmp_path,
        backend="rocksdb-incremental",
        parallelism=1,
        level0_compaction_trigger=MAX_ROUNDS,
    )
    async with env.start("counts") as job:
        for round_ in range(12):  # three times RocksDB's default trigger
            touch(topic, range(round_ * 300, round_ * 300 + 300))
            await topic.all_read.wait()
            shared.append(set(shared_of(await job.trigger_checkpoint())))
        await cancel_and_wait(job)

    assert all(earlier < later for earlier, later in itertools.pairwise(shared))


@pytest.mark.parametrize(
    ("written_by", "restored_by"),
    [("rocksdb-incremental", "memory"), ("memory-incremental", "rocksdb-incremental")],
)
async def test_a_job_on_another_backend_resumes_from_an_incremental_checkpoint(
    tmp_path: Path, written_by: str, restored_by: str
) -> None:
    topic, sink = Topic(2), CollectSink[Any]()
    await checkpointed_twice(topic, sink, tmp_path, written_by)

    touch(topic, range(KEYS))
    topic.close()
    await counts_job(topic, sink, tmp_path, backend=restored_by).execute(
        "counts", restore_from="latest"
    )

    assert counts_of(sink) == {key: 3 if key < KEYS // 100 else 2 for key in range(KEYS)}


async def test_the_first_checkpoint_after_a_restore_uploads_every_sst_again(
    tmp_path: Path,
) -> None:
    topic = Topic(2)
    await checkpointed_twice(topic, CollectSink(), tmp_path, "rocksdb-incremental")
    restored_files = shared_folder(tmp_path)

    touch(topic, range(10))
    env = counts_job(topic, CollectSink(), tmp_path, backend="rocksdb-incremental")
    async with env.start("counts", restore_from="latest") as job:
        await topic.all_read.wait()
        first = await job.trigger_checkpoint()
        await cancel_and_wait(job)

    assert restored_files.isdisjoint(Path(location).name for location in shared_of(first))


async def test_a_failed_checkpoint_deletes_the_ssts_it_uploaded_and_none_reuses_them(
    tmp_path: Path,
) -> None:
    topic, sink, storage = Topic(1), CollectSink[Any](), MainFileFails(tmp_path / "checkpoints", 2)
    env = counts_job(topic, sink, tmp_path, backend="rocksdb-incremental", parallelism=1)
    env.set_checkpoint_storage(storage)
    async with env.start("counts") as job:
        for keys in [range(KEYS), range(100), range(100, 200)]:
            touch(topic, keys)
            await topic.all_read.wait()
            try:
                last = await job.trigger_checkpoint()
            except CheckpointError:
                assert shared_folder(tmp_path) == {Path(loc).name for loc in shared_of(last)}
        await cancel_and_wait(job)
    assert storage.refused == 1, "the injected failure never fired"
    assert shared_folder(tmp_path) == {Path(location).name for location in shared_of(last)}

    topic.close()
    await counts_job(topic, sink, tmp_path, backend="memory").execute(
        "counts", restore_from="latest"
    )
    assert counts_of(sink) == {key: 2 if key < 200 else 1 for key in range(KEYS)}


class ResidueCounter(KeyedProcessFunction[int, int, tuple[int, int, int, int]]):
    """Per key: a map residue -> count and a list of every value; emits both sizes."""

    def open(self, context: RuntimeContext) -> None:
        self.counts = context.get_state(MapStateDescriptor[int, int]("counts"))
        self.values = context.get_state(ListStateDescriptor[int]("values"))

    def process_element(self, value: int, ctx: ProcessContext[int]) -> Any:
        residue = value % 7
        count = (self.counts.get(residue) or 0) + 1
        self.counts.put(residue, count)
        self.values.add(value)
        yield (ctx.get_current_key(), residue, count, len(self.values.get()))


async def test_map_and_list_state_are_exact_across_a_failure_with_incremental_checkpoints(
    tmp_path: Path,
) -> None:
    fail, sink, count = FailOnce(), CollectSink[Any](), 5_000
    numbers = [*range(2_000), AwaitCheckpoint(), *range(2_000, 2_500), fail, *range(2_500, count)]
    env = StreamEnvironment(parallelism=2, batch_size=256)
    env.enable_checkpointing(0.02)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    env.set_state_backend("rocksdb", path=tmp_path, incremental=True)
    (
        # One source subtask: split in two, the failure would begin the second split and
        # fire before any checkpoint, and the restart would restore nothing.
        env.from_source(CollectionSource(numbers), uid="numbers", parallelism=1)
        .key_by(lambda value: value % 40)
        .process(ResidueCounter(), uid="residues")
        .sink_to(sink, uid="out")
    )

    await env.execute("residues")

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    counts = Counter((key, residue) for key, residue, _, _ in sink.results)
    assert counts == Counter((value % 40, value % 7) for value in range(count))
    assert max(size for *_, size in sink.results) == count // 40
    assert leftovers(tmp_path) == [], "every operator deletes its database and checkpoints"
