"""Restores of incremental RocksDB checkpoints that open their files as the subtask's database.

At the parallelism the checkpoint was taken at, each subtask keeps its key-group range, and
a RocksDB backend downloads its snapshot's files and opens them as they are (Flink's restore
without rescaling); at another parallelism it opens the files that hold most of its key
groups, less the others, with its other key groups inserted (``test_rescale.py``); into the
memory backend the files are read into key groups.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    KeyedProcessFunction,
    MapStateDescriptor,
    OperatorError,
    ProcessContext,
    RestartStrategy,
    RuntimeContext,
    SourceContext,
    SourceSplit,
    StreamEnvironment,
    ValueStateDescriptor,
)
from lockgate.engine.errors import CorruptCheckpoint
from lockgate.engine.state import StateTtlConfig
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.rocksdb import (
    KEYS,
    checkpointed_twice,
    counts_job,
    counts_of,
    leftovers,
    shared_of,
    touch,
)
from tests.engine.jobs.savepoints import Topic, TopicSource

COUNT, KEYED_BY = 5_000, 40
HOUR = StateTtlConfig(3_600.0)


def failing_once(fail: FailOnce) -> list[Any]:
    """Numbers with a checkpoint awaited, then a failure, in the middle (read by one source
    subtask: split in two, the failure would begin the second split, before any checkpoint)."""
    return [*range(2_000), AwaitCheckpoint(), *range(2_000, 2_500), fail, *range(2_500, COUNT)]


def rocksdb_env(tmp_path: Path) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, batch_size=256)
    env.enable_checkpointing(0.02)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    env.set_state_backend("rocksdb", path=tmp_path / "databases", incremental=True)
    return env


def restores(job: Any, uid: str) -> list[str]:
    return [statistics.restore for statistics in job.metrics().keyed_state(uid)]


@pytest.mark.parametrize(
    ("backend", "parallelism", "restored_as"),
    [
        ("rocksdb-incremental", 2, "files"),
        ("rocksdb-incremental", 3, "files"),
        ("rocksdb-incremental", 1, "files"),
        ("memory", 2, "key_groups"),
        ("memory", 3, "key_groups"),
    ],
)
async def test_a_restore_opens_the_files_only_into_rocksdb_at_any_parallelism(
    tmp_path: Path, backend: str, parallelism: int, restored_as: str
) -> None:
    topic, sink = Topic(2), CollectSink[Any]()
    await checkpointed_twice(topic, sink, tmp_path, "rocksdb-incremental")

    touch(topic, range(KEYS))
    topic.close()
    env = counts_job(topic, sink, tmp_path, backend=backend, parallelism=parallelism)
    async with env.start("counts", restore_from="latest") as job:
        await job.wait()

    assert restores(job, "counts") == [restored_as] * parallelism
    assert counts_of(sink) == {key: 3 if key < KEYS // 100 else 2 for key in range(KEYS)}
    assert leftovers(tmp_path / "databases") == []


async def test_running_counts_continue_exactly_after_a_failure_restored_from_files(
    tmp_path: Path,
) -> None:
    fail, sink = FailOnce(), CollectSink[Any]()
    env = rocksdb_env(tmp_path)
    (
        env.from_source(CollectionSource(failing_once(fail)), uid="numbers", parallelism=1)
        .map(lambda value: (value % KEYED_BY, 1))
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="out")
    )

    async with env.start("counts") as job:
        await job.wait()

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert (job.metrics().attempt, restores(job, "counts")) == (1, ["files", "files"])
    per_key = COUNT // KEYED_BY
    assert sorted(sink.results) == [
        (key, count) for key in range(KEYED_BY) for count in range(1, per_key + 1)
    ]


class ExpiringResidues(KeyedProcessFunction[int, int, tuple[int, int, int, int]]):
    """Per key, in states with a TTL: a map residue -> count, and how many values it saw."""

    def open(self, context: RuntimeContext) -> None:
        self.residues = context.get_state(MapStateDescriptor[int, int]("residues", ttl=HOUR))
        self.seen = context.get_state(ValueStateDescriptor[int]("seen", ttl=HOUR))

    def process_element(self, value: int, ctx: ProcessContext[int]) -> Any:
        residue = value % 7
        count = (self.residues.get(residue) or 0) + 1
        self.residues.put(residue, count)
        self.seen.update((self.seen.value() or 0) + 1)
        yield (ctx.get_current_key(), residue, count, self.seen.value())


async def test_map_and_value_states_with_a_ttl_are_exact_across_a_restore_from_files(
    tmp_path: Path,
) -> None:
    fail, sink = FailOnce(), CollectSink[Any]()
    env = rocksdb_env(tmp_path)
    (
        env.from_source(CollectionSource(failing_once(fail)), uid="numbers", parallelism=1)
        .key_by(lambda value: value % KEYED_BY)
        .process(ExpiringResidues(), uid="residues")
        .sink_to(sink, uid="out")
    )

    async with env.start("residues") as job:
        await job.wait()

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert restores(job, "residues") == ["files", "files"]
    counts = Counter((key, residue) for key, residue, _, _ in sink.results)
    assert counts == Counter((value % KEYED_BY, value % 7) for value in range(COUNT))
    assert sorted(count for key, residue, count, _ in sink.results if (key, residue) == (3, 5)) == (
        list(range(1, counts[3, 5] + 1))
    )
    assert sorted(seen for key, *_, seen in sink.results if key == 3) == list(
        range(1, COUNT // KEYED_BY + 1)
    )


def missing(locations: Iterable[str]) -> list[str]:
    return [location for location in locations if not Path(location).exists()]


def corrupt(location: str) -> None:
    """Flip one byte in the middle of the file at ``location`` (its size stays)."""
    path = Path(location)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("parallelism", [2, 3])
async def test_a_corrupt_sst_file_fails_the_restore_naming_it(
    tmp_path: Path, parallelism: int
) -> None:
    topic = Topic(2)
    checkpoint = await checkpointed_twice(topic, CollectSink(), tmp_path, "rocksdb-incremental")
    location = sorted(shared_of(checkpoint))[-1]
    corrupt(location)
    topic.close()

    env = counts_job(
        topic, CollectSink(), tmp_path, backend="rocksdb-incremental", parallelism=parallelism
    )
    env.set_restart_strategy(RestartStrategy.none())  # a job reading corrupt files would retry
    with pytest.raises(CorruptCheckpoint, match=f"{location} is corrupt: its checksum"):
        await env.execute("counts", restore_from="latest")

    assert leftovers(tmp_path / "databases") == []


class RefusingSource(TopicSource):
    """A topic source whose readers cannot start (the deployment fails before the keyed
    operators downstream are built)."""

    def create_reader(self, splits: Sequence[SourceSplit], context: SourceContext) -> Any:
        raise ConnectionError("the topic is unreachable")


async def test_files_downloaded_for_a_deployment_that_failed_are_deleted(
    tmp_path: Path,
) -> None:
    topic = Topic(2)
    await checkpointed_twice(topic, CollectSink(), tmp_path, "rocksdb-incremental")
    env = StreamEnvironment(parallelism=2, max_parallelism=32)
    env.enable_checkpointing()
    env.set_checkpoint_storage((tmp_path / "checkpoints").as_uri())
    env.set_state_backend("rocksdb", path=tmp_path / "databases", incremental=True)
    (
        env.from_source(RefusingSource(topic), uid="events")
        .map(topic.passed)
        .key_by(lambda event: event[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(CollectSink(), uid="out")
    )

    with pytest.raises(OperatorError, match="the topic is unreachable"):
        await env.execute("counts", restore_from="latest")

    assert leftovers(tmp_path / "databases") == []


async def test_the_new_job_never_deletes_the_files_of_the_checkpoint_it_restored_from_files(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(2), CollectSink[Any]()
    restored = await checkpointed_twice(topic, sink, tmp_path, "rocksdb-incremental")
    env = counts_job(topic, sink, tmp_path, backend="rocksdb-incremental")  # retains one
    # by location, not "latest": a run owns (and retention deletes) its own latest checkpoint
    async with env.start("counts", restore_from=restored.location) as job:
        for round_ in range(3):
            touch(topic, range(round_ * 100, round_ * 100 + 100))
            await topic.all_read.wait()
            await job.trigger_checkpoint()
        assert restores(job, "counts") == ["files", "files"]
        await cancel_and_wait(job)

    assert shared_of(restored), "the restored checkpoint has no shared files to keep"
    assert missing(shared_of(restored)) == []
