"""``KeyedStream.aggregate``: a rolling aggregate per key with an ``AggregateFunction``.

Exact running results per key against a plain loop: without failures, after a failure
injected once a checkpoint completed (on each state backend, full and incremental; the
accumulators come back from the checkpoint, so a record is neither lost nor counted twice)
and after a restore at another parallelism. The function changes its accumulator in place,
as Flink allows (that a snapshot never sees such a change is tested with the state itself,
in tests/engine/state/test_copy_on_write.py).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    AggregateFunction,
    GraphError,
    MemoryCheckpointStorage,
    RestartStrategy,
    StreamEnvironment,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce

KEYS = 7
Event = tuple[str, int]
Running = tuple[str, int, int]


class SumAndCount(AggregateFunction[Event, list[Any], Running]):
    """Per key: ``(key, sum, count)`` so far; ``add`` changes the accumulator in place."""

    def create_accumulator(self) -> list[Any]:
        return ["", 0, 0]

    def add(self, value: Event, accumulator: list[Any]) -> list[Any]:
        accumulator[0] = value[0]
        accumulator[1] += value[1]
        accumulator[2] += 1
        return accumulator

    def get_result(self, accumulator: list[Any]) -> Running:
        return (accumulator[0], accumulator[1], accumulator[2])


def events(count: int, start: int = 0) -> list[Event]:
    return [(f"k{i % KEYS}", i) for i in range(start, start + count)]


def expected(all_events: list[Event]) -> dict[str, list[Running]]:
    """The running ``(key, sum, count)`` of every key, record by record: a plain loop."""
    sums: dict[str, tuple[int, int]] = defaultdict(lambda: (0, 0))
    running: dict[str, list[Running]] = defaultdict(list)
    for key, value in all_events:
        total, count = sums[key]
        sums[key] = (total + value, count + 1)
        running[key].append((key, *sums[key]))
    return dict(running)


def by_key(results: list[Running]) -> dict[str, list[Running]]:
    running: dict[str, list[Running]] = defaultdict(list)
    for result in results:
        running[result[0]].append(result)
    return dict(running)


def aggregating_job(
    env: StreamEnvironment, elements: list[Any], sink: CollectSink[Any], *, phase: int = 1
) -> StreamEnvironment:
    # One source subtask, so that each key's records arrive in the order of the list.
    (
        env.from_source(CollectionSource(elements), uid=f"events-{phase}", parallelism=1)
        .key_by(lambda event: event[0])
        .aggregate(SumAndCount(), uid="sums")
        .sink_to(sink, uid=f"out-{phase}")
    )
    return env


async def test_each_record_emits_its_keys_running_result() -> None:
    sink: CollectSink[Running] = CollectSink()
    env = aggregating_job(StreamEnvironment(parallelism=2), events(2_000), sink)

    await env.execute("aggregate")

    assert by_key(sink.results) == expected(events(2_000))


@pytest.mark.parametrize(
    ("backend", "incremental"),
    [("memory", False), ("memory", True), ("rocksdb", False), ("rocksdb", True)],
)
async def test_a_failure_restores_accumulators_as_the_checkpoint_saw_them(
    backend: str, incremental: bool, tmp_path: Path
) -> None:
    fail = FailOnce()
    elements: list[Any] = [*events(3_000), AwaitCheckpoint(), *events(500, 3_000), fail]
    elements += events(3_000, 3_500)
    env = StreamEnvironment(parallelism=2, batch_size=64)
    env.enable_checkpointing(0.01)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    path = tmp_path if backend == "rocksdb" else None
    env.set_state_backend(backend, path=path, incremental=incremental)
    sink: CollectSink[Running] = CollectSink()

    await aggregating_job(env, elements, sink).execute("aggregate")

    assert fail.fired
    assert by_key(sink.results) == expected(events(6_500))


async def test_accumulators_move_with_their_keys_to_another_parallelism() -> None:
    storage, first, second = MemoryCheckpointStorage(), CollectSink(), CollectSink()
    env = StreamEnvironment(parallelism=2, max_parallelism=13)
    env.enable_checkpointing()
    env.set_checkpoint_storage(storage)
    await aggregating_job(env, events(1_000), first).execute("sums")

    env = StreamEnvironment(parallelism=3, max_parallelism=13)
    env.enable_checkpointing()
    env.set_checkpoint_storage(storage)
    aggregating_job(env, events(500, 1_000), second, phase=2)
    await env.execute("sums", restore_from="latest", allow_non_restored_state=True)

    later = {
        key: running[len(by_key(first.results)[key]) :]
        for key, running in expected(events(1_500)).items()
    }
    assert by_key(second.results) == later


def test_aggregate_needs_a_keyed_stream() -> None:
    env = StreamEnvironment()
    (
        env.from_source(CollectionSource(events(10)), uid="events")
        .aggregate(SumAndCount(), uid="sums")
        .sink_to(CollectSink(), uid="out")
    )

    with pytest.raises(GraphError, match=r"operator 'sums' \(aggregate\) needs a keyed stream"):
        env.plan()


def test_aggregate_needs_an_aggregate_function() -> None:
    keyed = (
        StreamEnvironment()
        .from_source(CollectionSource(events(10)), uid="events")
        .key_by(lambda event: event[0])
    )

    with pytest.raises(GraphError, match=r"aggregate 'sums' needs an AggregateFunction.*reduce"):
        keyed.aggregate(lambda a, b: a, uid="sums")  # type: ignore[arg-type]
