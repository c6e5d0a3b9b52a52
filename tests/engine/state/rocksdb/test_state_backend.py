"""Jobs on the RocksDB state backend: exactly-once across a failure, and no folder left behind.

Exactly-once as Flink tests it: one failure injected after a completed checkpoint, a guard
that it fired, results counted by a transactional sink outside operator state, exact values.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    KeyedProcessFunction,
    ListStateDescriptor,
    MapStateDescriptor,
    ProcessContext,
    RestartStrategy,
    RuntimeContext,
    Sink,
    SinkContext,
    SinkWriter,
    StreamEnvironment,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce

COUNT = 5_000
KEYS = 40


def rocksdb_env(path: Path) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, batch_size=256, channel_capacity=1024)
    env.enable_checkpointing(0.02)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    env.set_state_backend("rocksdb", path=path)
    return env


def leftovers(path: Path) -> list[Path]:
    """What remains in the folder the databases were made in."""
    return sorted(path.iterdir())


def failing_numbers(fail: FailOnce) -> list[Any]:
    """0..COUNT-1, failing once 500 records after a checkpoint completed (read by one source
    subtask: split in two, the failure would begin the second split, before any checkpoint)."""
    return [*range(2_000), AwaitCheckpoint(), *range(2_000, 2_500), fail, *range(2_500, COUNT)]


async def test_a_keyed_running_sum_on_rocksdb_is_exact_across_a_failure(tmp_path: Path) -> None:
    fail = FailOnce()
    env = rocksdb_env(tmp_path)
    sink = CollectSink()
    (
        env.from_source(CollectionSource(failing_numbers(fail)), uid="numbers", parallelism=1)
        .map(lambda value: (value % KEYS, value), uid="pairs")
        .key_by(lambda pair: pair[0])
        .reduce(lambda total, pair: (total[0], total[1] + pair[1]), uid="sums")
        .sink_to(sink, uid="out")
    )

    await env.execute("rocksdb-sums")

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert len(sink.results) == COUNT
    assert dict(sink.results) == {key: sum(range(key, COUNT, KEYS)) for key in range(KEYS)}
    assert leftovers(tmp_path) == [], "every operator deletes its database when it closes"


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


async def test_map_and_list_state_on_rocksdb_are_exact_across_a_failure(tmp_path: Path) -> None:
    fail = FailOnce()
    env = rocksdb_env(tmp_path)
    sink = CollectSink()
    (
        env.from_source(CollectionSource(failing_numbers(fail)), uid="numbers", parallelism=1)
        .key_by(lambda value: value % KEYS)
        .process(ResidueCounter(), uid="residues")
        .sink_to(sink, uid="out")
    )

    await env.execute("rocksdb-residues")

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    expected = Counter((value % KEYS, value % 7) for value in range(COUNT))
    counts = Counter((key, residue) for key, residue, _, _ in sink.results)
    assert counts == expected
    assert max(size for *_, size in sink.results) == COUNT // KEYS
    assert sorted(count for key, residue, count, _ in sink.results if (key, residue) == (0, 0)) == (
        list(range(1, expected[0, 0] + 1))
    )
    assert leftovers(tmp_path) == []


class BrokenSink(Sink[Any]):
    """A sink whose writers cannot be created: the deployment fails after the operators."""

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        raise ConnectionError("the external system is down")


async def test_a_deployment_that_fails_deletes_the_databases_it_made(tmp_path: Path) -> None:
    env = StreamEnvironment()
    env.set_state_backend("rocksdb", path=tmp_path)
    (
        env.from_source(CollectionSource(range(10)), uid="numbers")
        .key_by(lambda value: value % 2)
        .reduce(lambda a, b: a + b, uid="sums")
        .sink_to(BrokenSink(), uid="out")
    )

    with pytest.raises(Exception) as raised:  # today wrapped in an ExceptionGroup
        await env.execute("broken")

    assert "the external system is down" in repr(raised.value)

    assert leftovers(tmp_path) == []
