"""The operators' event-time paths: ``(timestamp, value)`` in, each output with its timestamp."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest

from lockgate.engine import (
    AggregateFunction,
    KeyedProcessFunction,
    ProcessContext,
    RuntimeContext,
    TimeDomain,
    Watermark,
    WatermarkStrategy,
)
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.operators.basic import (
    FilterOperator,
    FlatMapOperator,
    MapOperator,
    ProcessOperator,
)
from lockgate.engine.runtime.operators.kinds import create_operator
from lockgate.engine.runtime.operators.rolling import ReduceOperator
from lockgate.engine.runtime.operators.stamped import (
    StampedFilterOperator,
    StampedFlatMapOperator,
    StampedMapOperator,
    StampedReduceOperator,
)
from lockgate.engine.runtime.operators.stamped_process import StampedProcessOperator
from lockgate.engine.time.clock import ManualClock


def node(kind: OperatorKind, function: Any, *, timestamped: bool = True) -> OperatorNode:
    built = OperatorNode(0, "op", "op", kind, function, 1, True, key_selector=lambda r: r[0])
    built.timestamped = built.emits_timestamps = timestamped
    return built


def opened(kind: OperatorKind, function: Any, clock: ManualClock | None = None) -> Any:
    return opened_node(node(kind, function), clock)


def opened_node(built: OperatorNode, clock: ManualClock | None = None) -> Any:
    operator = create_operator(built, clock=clock or ManualClock())
    operator.open(RuntimeContext("op", 0, 1, 128, clock or ManualClock(), operator.keyed_state))
    return operator


def first(*records: Any) -> Any:
    return records[0]


@pytest.mark.parametrize(
    ("kind", "function", "plain", "stamped"),
    [
        (OperatorKind.MAP, first, MapOperator, StampedMapOperator),
        (OperatorKind.FILTER, first, FilterOperator, StampedFilterOperator),
        (OperatorKind.FLAT_MAP, first, FlatMapOperator, StampedFlatMapOperator),
        (OperatorKind.REDUCE, first, ReduceOperator, StampedReduceOperator),
        (OperatorKind.PROCESS, KeyedProcessFunction(), ProcessOperator, StampedProcessOperator),
    ],
)
def test_only_a_node_whose_records_carry_timestamps_gets_the_operator_that_keeps_them(
    kind: OperatorKind, function: Any, plain: type, stamped: type
) -> None:
    assert type(create_operator(node(kind, function, timestamped=False))) is plain
    assert type(create_operator(node(kind, function))) is stamped


def test_map_filter_and_flat_map_keep_the_timestamp_of_each_record() -> None:
    records = [(1.0, ("a", 1)), (2.0, ("b", 2)), (3.0, ("a", 3))]

    mapped = opened(OperatorKind.MAP, lambda r: (r[0], r[1] * 10)).process_batch(records)
    kept = opened(OperatorKind.FILTER, lambda r: r[1] != 2).process_batch(records)
    flat = opened(OperatorKind.FLAT_MAP, lambda r: [r[1]] * r[1]).process_batch(records[:2])

    assert mapped == [(1.0, ("a", 10)), (2.0, ("b", 20)), (3.0, ("a", 30))]
    assert kept == [(1.0, ("a", 1)), (3.0, ("a", 3))]
    assert flat == [(1.0, 1), (2.0, 2), (2.0, 2)]


def test_a_flat_map_sent_in_chunks_keeps_each_elements_timestamp() -> None:
    operator = opened(OperatorKind.FLAT_MAP, lambda r: (n for n in range(r)))

    chunks = list(operator.chunks([(1.0, 3), (2.0, 2), (3.0, 3)], 2))

    assert chunks == [
        [(1.0, 0), (1.0, 1)],
        [(1.0, 2), (2.0, 0)],
        [(2.0, 1), (3.0, 0)],
        [(3.0, 1), (3.0, 2)],
    ]


class Count(AggregateFunction[Any, int, int]):
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, accumulator: int) -> int:
        return accumulator + 1

    def get_result(self, accumulator: int) -> int:
        return accumulator


def test_rolling_reduce_and_aggregate_emit_with_the_timestamp_of_the_record_folded_in() -> None:
    records = [(1.0, ("a", 1)), (2.0, ("a", 2)), (3.0, ("b", 5))]

    reduced = opened(OperatorKind.REDUCE, lambda a, b: (a[0], a[1] + b[1])).process_batch(records)
    counted = opened(OperatorKind.AGGREGATE, Count()).process_batch(records)

    assert reduced == [(1.0, ("a", 1)), (2.0, ("a", 3)), (3.0, ("b", 5))]
    assert counted == [(1.0, 1), (2.0, 2), (3.0, 1)]


class Timers(KeyedProcessFunction[str, Any, Any]):
    """Sets an event-time and a processing-time timer 10 s after each record's time."""

    def process_element(self, value: Any, ctx: ProcessContext[str]) -> Iterator[Any]:
        timestamp = ctx.timestamp()
        assert timestamp is not None
        ctx.timer_service().register_event_time_timer(timestamp + 10.0)
        ctx.timer_service().register_processing_time_timer(timestamp + 10.0)
        ctx.collect_with_timestamp(("early", value[1]), timestamp - 1.0)
        yield "seen", value[1]

    def on_timer(self, timestamp: float, ctx: ProcessContext[str]) -> Iterator[Any]:
        yield ctx.time_domain, ctx.timestamp()


def test_a_process_function_stamps_what_it_yields_and_what_it_collects() -> None:
    operator = opened(OperatorKind.PROCESS, Timers())

    out = operator.process_batch([(5.0, ("a", 1))])

    assert out == [(4.0, ("early", 1)), (5.0, ("seen", 1))]


def test_an_event_time_timer_stamps_with_its_time_a_processing_time_timer_with_none() -> None:
    clock = ManualClock()
    operator = opened(OperatorKind.PROCESS, Timers(), clock)
    operator.process_batch([(5.0, ("a", 1))])

    fired_by_watermark, _ = operator.process_watermark(Watermark(15.0))
    clock.advance(15.0)
    fired_by_clock = operator.fire_processing_timers(clock.now())

    assert fired_by_watermark == [(15.0, (TimeDomain.EVENT_TIME, 15.0))]
    assert fired_by_clock == [(None, (TimeDomain.PROCESSING_TIME, 15.0))]


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_collect_with_a_timestamp_that_is_not_finite_is_refused(bad: float) -> None:
    class Bad(KeyedProcessFunction[str, Any, Any]):
        def process_element(self, value: Any, ctx: ProcessContext[str]) -> None:
            ctx.collect_with_timestamp(value, bad)

    with pytest.raises(ValueError, match=f"got the timestamp {bad} for"):
        opened(OperatorKind.PROCESS, Bad()).process_batch([(1.0, ("a", 1))])


def test_a_watermark_strategy_replaces_the_timestamps_records_had() -> None:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda r: r[1] * 100.0
    )

    restamped = opened(OperatorKind.TIMESTAMPS, strategy).process_batch([(1.0, ("a", 2))])
    first = node(OperatorKind.TIMESTAMPS, strategy, timestamped=False)
    first.emits_timestamps = True
    stamped = opened_node(first)

    assert restamped == [(200.0, ("a", 2))]
    assert stamped.process_batch([("a", 3)]) == [(300.0, ("a", 3))]


def test_a_watermark_strategy_whose_timestamps_nobody_reads_passes_records_unchanged() -> None:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda r: r[1] * 100.0
    )
    unread = opened_node(node(OperatorKind.TIMESTAMPS, strategy, timestamped=False))

    assert unread.process_batch([("a", 3)]) == [("a", 3)]
    unread.watermarks.on_periodic_emit(0.0, 0.2)
    assert unread.watermarks.current == math.nextafter(300.0, -math.inf)
