"""Switching state backend through a savepoint: memory to RocksDB and back, state intact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import (
    KeyedProcessFunction,
    ListStateDescriptor,
    MapStateDescriptor,
    ProcessContext,
    RuntimeContext,
    StreamEnvironment,
    ValueStateDescriptor,
)
from lockgate.engine.checkpointing.storage import storage_reading
from lockgate.engine.savepoints.format import is_savepoint_state
from tests.engine.jobs.savepoints import Topic, TopicSource

KEYS, FIRST, MORE = 10, 30, 20
SWITCHES = [
    ("memory", "rocksdb"),
    ("rocksdb", "memory"),
    ("memory-incremental", "rocksdb-incremental"),
    ("rocksdb-incremental", "memory-incremental"),
]


class Tally(KeyedProcessFunction[int, tuple[int, int], tuple[int, int, int, int]]):
    """Per key: a count (value), every value (list) and a count per residue (map)."""

    def open(self, context: RuntimeContext) -> None:
        self.count = context.get_state(ValueStateDescriptor[int]("count", default=0))
        self.values = context.get_state(ListStateDescriptor[int]("values"))
        self.residues = context.get_state(MapStateDescriptor[int, int]("residues"))

    def process_element(self, event: tuple[int, int], ctx: ProcessContext[int]) -> Any:
        key, value = event
        self.count.update(self.count.value() + 1)
        self.values.add(value)
        self.residues.put(value % 3, (self.residues.get(value % 3) or 0) + 1)
        listed, mapped = len(self.values.get()), sum(self.residues.values())
        yield (key, self.count.value(), listed, mapped)


def tally_job(
    topic: Topic, sink: CollectSink[Any], backend: str, tmp_path: Path
) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, max_parallelism=16)
    env.enable_checkpointing()
    env.set_checkpoint_storage("memory://")
    name, _, incremental = backend.partition("-")
    path = tmp_path / "databases" if name == "rocksdb" else None
    env.set_state_backend(name, path=path, incremental=bool(incremental))
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed)
        .key_by(lambda event: event[0])
        .process(Tally(), uid="tally")
        .sink_to(sink, uid="out")
    )
    return env


def append(topic: Topic, per_key: int) -> None:
    events = [(key, number) for number in range(per_key) for key in range(KEYS)]
    topic.append(events, partition_of=lambda event: event[0])


async def stopped_with_savepoint(
    topic: Topic, sink: CollectSink[Any], backend: str, tmp_path: Path
) -> str:
    append(topic, FIRST)
    async with tally_job(topic, sink, backend, tmp_path).start("tally") as job:
        await topic.all_read.wait()
        return await job.stop_with_savepoint((tmp_path / "savepoints").as_uri())


@pytest.mark.parametrize(("before", "after"), SWITCHES)
async def test_a_job_resumes_exactly_on_another_backend_from_a_savepoint(
    tmp_path: Path, before: str, after: str
) -> None:
    topic, sink = Topic(2), CollectSink[Any]()
    savepoint = await stopped_with_savepoint(topic, sink, before, tmp_path)

    append(topic, MORE)
    topic.close()
    await tally_job(topic, sink, after, tmp_path).execute("tally", restore_from=savepoint)

    counts = sorted((key, count) for key, count, _, _ in sink.results)
    assert counts == [(key, n) for key in range(KEYS) for n in range(1, FIRST + MORE + 1)]
    assert all(listed == mapped == count for _, count, listed, mapped in sink.results)


async def test_a_savepoint_of_an_incremental_rocksdb_job_is_full_and_canonical(
    tmp_path: Path,
) -> None:
    savepoint = await stopped_with_savepoint(
        Topic(2), CollectSink(), "rocksdb-incremental", tmp_path
    )

    storage = storage_reading(savepoint)
    metadata = await storage.read_metadata(savepoint)
    handles = [h for h in metadata.operators["tally"].handles if h is not None]
    files = [await storage.read_state(handle) for handle in handles]
    assert handles and not any(handle.shared_files for handle in handles)
    assert all(is_savepoint_state(data) for data in files)
