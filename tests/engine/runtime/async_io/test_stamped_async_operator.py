"""async_map with event time: results and failed records keep their input's timestamp."""

from __future__ import annotations

from typing import Any

import anyio.lowlevel
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import OutputTag, StreamEnvironment
from lockgate.engine.checkpointing.snapshots import ASYNC_INPUTS_STATE, OperatorSnapshot
from lockgate.engine.functions.async_io import AsyncMapSpec
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.async_io.operator import STAMPED_INPUTS
from lockgate.engine.runtime.operators.kinds import create_operator
from lockgate.engine.time.clock import ManualClock
from tests.engine.jobs.timestamps import BY_TIME, events, stamps_of

FAILED = OutputTag[int]("failed")


async def later(value: int) -> int:
    """The value, after ``value % 4`` turns of the loop: calls complete out of order."""
    for _ in range(value % 4):
        await anyio.lowlevel.checkpoint()
    return value


@pytest.mark.parametrize("ordered", [True, False])
async def test_each_result_carries_the_timestamp_of_its_input(ordered: bool) -> None:
    env, sink = StreamEnvironment(parallelism=2), CollectSink[Any]()
    source = env.from_source(CollectionSource(events(80)), uid="e", watermark_strategy=BY_TIME)
    results = source.map(lambda e: e[2], uid="values").async_map(
        later, ordered=ordered, uid="later"
    )
    stamps_of(results).sink_to(sink, uid="out")

    await env.execute("stamped-async")

    assert sorted(sink.results) == sorted((n, t) for _, t, n in events(80))


async def fails_on_odd(value: int) -> int:
    if value % 2:
        raise ValueError(f"odd: {value}")
    return value


async def test_a_failed_record_reaches_the_side_output_with_its_timestamp() -> None:
    env, sink = StreamEnvironment(parallelism=1), CollectSink[Any]()
    source = env.from_source(CollectionSource(events(20)), uid="e", watermark_strategy=BY_TIME)
    results = source.map(lambda e: e[2], uid="values").async_map(
        fails_on_odd, ordered=False, on_failure=FAILED, uid="evens"
    )
    results.sink_to(CollectSink[Any](), uid="evens-out")
    stamps_of(results.side_output(FAILED)).sink_to(sink, uid="out")

    await env.execute("stamped-failures")

    assert sorted(sink.results) == sorted((n, t) for _, t, n in events(20) if n % 2)


def operator(restored: OperatorSnapshot | None = None, *, timestamped: bool = True) -> Any:
    spec = AsyncMapSpec(function=later)
    node = OperatorNode(0, "later", "later", OperatorKind.ASYNC_MAP, spec, 1, True)
    node.timestamped = timestamped
    return create_operator(node, restored, ManualClock())


def test_a_checkpoint_stores_the_pending_records_with_their_timestamps() -> None:
    first = operator()
    first.process_batch([(1.0, 10), (2.0, 20)])  # not started: the records wait

    snapshot = first.capture(1).materialize(128)
    again = operator(snapshot).capture(2).materialize(128)

    assert snapshot.lists[STAMPED_INPUTS.name] == [(1.0, 10), (2.0, 20)]
    assert again.lists[STAMPED_INPUTS.name] == [(1.0, 10), (2.0, 20)]
    assert again.lists[ASYNC_INPUTS_STATE] == []


def test_records_stored_without_event_time_restore_without_a_timestamp_and_back() -> None:
    plain = OperatorSnapshot("later", lists={ASYNC_INPUTS_STATE: [10, 20]})
    stamped = OperatorSnapshot("later", lists={STAMPED_INPUTS.name: [(1.0, 10)]})

    into_stamped = operator(plain).capture(1).materialize(128)
    into_plain = operator(stamped, timestamped=False).capture(1).materialize(128)

    assert into_stamped.lists[STAMPED_INPUTS.name] == [(None, 10), (None, 20)]
    assert into_plain.lists[ASYNC_INPUTS_STATE] == [10]
