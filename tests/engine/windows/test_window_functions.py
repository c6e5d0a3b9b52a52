"""Window functions: reduce and aggregate with a ProcessWindowFunction, window and global state."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    AggregateFunction,
    EventTimeSessionWindows,
    GraphError,
    ManualClock,
    OperatorError,
    OutputTag,
    ProcessWindowFunction,
    RuntimeContext,
    StreamEnvironment,
    TimeWindow,
    TumblingEventTimeWindows,
    ValueStateDescriptor,
    Watermark,
    WindowContext,
)
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.operators.kinds import create_operator
from lockgate.engine.windows.spec import WindowFunctionKind, WindowSpec
from tests.engine.jobs.windows import MONOTONOUS, Event

Described = tuple[str, float, float, Any]  # (key, window start, window end, result)


class Average(AggregateFunction[Event, list[int], float]):
    """The average value; its accumulator is ``[sum, count]``, changed in place."""

    def create_accumulator(self) -> list[int]:
        return [0, 0]

    def add(self, value: Event, accumulator: list[int]) -> list[int]:
        accumulator[0] += value[2]
        accumulator[1] += 1
        return accumulator

    def get_result(self, accumulator: list[int]) -> float:
        return accumulator[0] / accumulator[1]


class Describe(ProcessWindowFunction[Any, Described, str]):
    """Emits ``(key, start, end, result)`` from the one pre-aggregated result it is given."""

    def process(self, key: str, context: WindowContext, elements: list[Any]) -> Iterator[Described]:
        [result] = elements
        window = context.window
        assert isinstance(window, TimeWindow)
        yield (key, window.start, window.end, result)


EVENTS = [("a", 1.0, 2), ("b", 2.0, 10), ("a", 3.0, 4), ("a", 12.0, 9), ("b", 14.0, 1)]


def keyed_events(env: StreamEnvironment, events: list[Event] = EVENTS) -> Any:
    return env.from_source(
        CollectionSource(events), uid="events", watermark_strategy=MONOTONOUS
    ).key_by(lambda event: event[0])


async def test_aggregate_with_a_window_function_gives_key_window_and_result() -> None:
    env, sink = StreamEnvironment(parallelism=2), CollectSink[Any]()
    (
        keyed_events(env)
        .window(TumblingEventTimeWindows.of(10.0))
        .aggregate(Average(), Describe(), uid="averages")
        .sink_to(sink, uid="out")
    )

    await env.execute("averages")

    assert sorted(sink.results) == [
        ("a", 0.0, 10.0, 3.0),
        ("a", 10.0, 20.0, 9.0),
        ("b", 0.0, 10.0, 10.0),
        ("b", 10.0, 20.0, 1.0),
    ]


async def test_reduce_with_a_window_function_gives_key_window_and_reduced_value() -> None:
    env, sink = StreamEnvironment(parallelism=2), CollectSink[Any]()
    (
        keyed_events(env)
        .window(TumblingEventTimeWindows.of(10.0))
        .reduce(lambda a, b: a if a[2] >= b[2] else b, Describe(), uid="largest")
        .sink_to(sink, uid="out")
    )

    await env.execute("largest")

    assert sorted(sink.results) == [
        ("a", 0.0, 10.0, ("a", 3.0, 4)),
        ("a", 10.0, 20.0, ("a", 12.0, 9)),
        ("b", 0.0, 10.0, ("b", 2.0, 10)),
        ("b", 10.0, 20.0, ("b", 14.0, 1)),
    ]


def window_operator(spec: WindowSpec) -> Operator:
    """The window operator as a job with event time deploys it: its records carry timestamps."""
    node = OperatorNode(0, "w", "w", OperatorKind.WINDOW, spec, 1, True, lambda e: e[0])
    node.timestamped = True
    operator = create_operator(node, clock=ManualClock())
    operator.open(RuntimeContext("w", 0, 1, 128, ManualClock(), operator.keyed_state))
    return operator


def stamped(*events: Event) -> list[tuple[float, Event]]:
    """The events as they travel with event time on: each its timestamp, then the event."""
    return [(event[1], event) for event in events]


def test_with_a_window_function_a_window_keeps_only_its_accumulator() -> None:
    spec = WindowSpec(
        assigner=TumblingEventTimeWindows.of(10.0),
        kind=WindowFunctionKind.AGGREGATE,
        function=Average(),
        window_function=Describe(),
    )
    operator = window_operator(spec)

    operator.process_batch(stamped(("a", 1.0, 2), ("a", 3.0, 4), ("a", 5.0, 6)))

    snapshot = operator.capture(1).materialize(128)
    [contents] = [g["window-contents"] for g in snapshot.keyed.values() if "window-contents" in g]
    assert contents == {"a": {(0.0, 10.0): [12, 3]}}  # the accumulator, not the records


FIRINGS = ValueStateDescriptor[int]("firings", default=0)
CLEARED = OutputTag[tuple[float, int]]("cleared")


class CountFirings(ProcessWindowFunction[Event, tuple[str, float, int, int], str]):
    """Counts firings per window (window state) and per key (global state).

    ``clear`` reports what the window's state held when the window went.
    """

    def process(
        self, key: str, context: WindowContext, elements: list[Event]
    ) -> Iterator[tuple[str, float, int, int]]:
        in_window = context.window_state().get_state(FIRINGS)
        for_key = context.global_state().get_state(FIRINGS)
        in_window.update(in_window.value() + 1)
        for_key.update(for_key.value() + 1)
        window = context.window
        assert isinstance(window, TimeWindow)
        yield (key, window.start, in_window.value(), for_key.value())

    def clear(self, context: WindowContext) -> None:
        window = context.window
        assert isinstance(window, TimeWindow)
        context.output(CLEARED, (window.start, context.window_state().get_state(FIRINGS).value()))


# [0, 10) fires at 12, again for the late 8 and 9; [10, 20) fires at the end of input
LATE_AND_AGAIN = [("a", 1.0, 1), ("a", 12.0, 2), ("a", 8.0, 3), ("a", 9.0, 4), ("a", 16.0, 5)]


async def test_window_state_is_per_window_and_global_state_is_per_key() -> None:
    env = StreamEnvironment(parallelism=1, batch_size=1, auto_watermark_interval=0.0)
    sink, cleared = CollectSink[Any](), CollectSink[Any]()
    fired = (
        keyed_events(env, LATE_AND_AGAIN)
        .window(TumblingEventTimeWindows.of(10.0))
        .allowed_lateness(5.0)
        .process(CountFirings(), uid="firings")
    )
    fired.sink_to(sink, uid="out")
    fired.side_output(CLEARED).sink_to(cleared, uid="cleared")

    await env.execute("firings")

    assert sink.results == [
        ("a", 0.0, 1, 1),
        ("a", 0.0, 2, 2),
        ("a", 0.0, 3, 3),
        ("a", 10.0, 1, 4),  # a new window starts at 1; the key's count goes on
    ]
    assert cleared.results == [(0.0, 3), (10.0, 1)]  # clear() saw each window's state


def test_per_window_state_goes_with_its_window() -> None:
    spec = WindowSpec(
        assigner=TumblingEventTimeWindows.of(10.0),
        kind=WindowFunctionKind.PROCESS,
        function=CountFirings(),
    )
    operator = window_operator(spec)
    operator.process_batch(stamped(("a", 1.0, 1), ("a", 12.0, 2)))

    operator.process_watermark(Watermark(11.0))  # [0, 10) fires and is cleaned up

    snapshot = operator.capture(1).materialize(128)
    tables = {name: table for group in snapshot.keyed.values() for name, table in group.items()}
    assert "window-state/firings" not in tables  # held by [0, 10) only, now gone
    assert tables["firings"] == {"a": 1}  # the global count stays


class WindowStateInSessions(ProcessWindowFunction[Event, Any, str]):
    """Reads per-window state, which merging windows do not have."""

    def process(self, key: str, context: WindowContext, elements: list[Event]) -> list[Any]:
        context.window_state().get_state(FIRINGS)
        return []


async def test_session_windows_refuse_per_window_state_as_in_flink() -> None:
    env = StreamEnvironment(parallelism=1)
    (
        keyed_events(env)
        .window(EventTimeSessionWindows.with_gap(5.0))
        .process(WindowStateInSessions(), uid="sessions")
        .sink_to(CollectSink[Any](), uid="out")
    )

    with pytest.raises(OperatorError) as failure:
        await env.execute("sessions")

    assert failure.value.uid == "sessions"
    assert "per-window state is not available on merging" in str(failure.value.__cause__)


def test_a_window_function_must_be_a_process_window_function() -> None:
    windowed = keyed_events(StreamEnvironment()).window(TumblingEventTimeWindows.of(10.0))

    with pytest.raises(GraphError, match=r"window 'sums'.*needs a ProcessWindowFunction"):
        windowed.reduce(max, lambda key, window, values: values, uid="sums")
