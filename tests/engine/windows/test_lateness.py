"""Allowed lateness at its boundary: lockgate decides as Flink's millisecond rule does.

Flink, in whole milliseconds: a window ``[start, end)`` with allowed lateness ``L`` is gone
once the watermark reaches ``end - 1 + L`` (``WindowOperator.isWindowLate``), and a
bounded-out-of-orderness watermark is ``newest - delay - 1``. Event time counts whole
milliseconds here too, as floats; the window operator runs without an event loop, its
watermarks made by the strategy's ``WatermarkGenerator`` from the same records.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    OutputTag,
    RuntimeContext,
    SlidingEventTimeWindows,
    StreamEnvironment,
    TumblingEventTimeWindows,
    Watermark,
    WatermarkGeneratorContext,
    WatermarkStrategy,
)
from lockgate.engine.functions.side_outputs import SideOutputCollector
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.operators.kinds import create_operator
from lockgate.engine.testing import RecordingWatermarkOutput
from lockgate.engine.time.clock import ManualClock
from lockgate.engine.windows.lateness import cleanup_time, is_element_late
from lockgate.engine.windows.spec import WindowFunctionKind, WindowSpec

Event = tuple[str, float, int]  # (key, event time, value)
LATE = OutputTag[Event]("late")


def flink_is_late(end: int, lateness: int, newest: int, delay: int) -> bool:
    """Flink's decision for a record of window [.., end) after a record at ``newest``."""
    watermark = newest - delay - 1  # BoundedOutOfOrdernessWatermarks.onPeriodicEmit
    cleanup = end - 1 + lateness  # WindowOperator.cleanupTime: maxTimestamp + lateness
    return cleanup <= watermark  # WindowOperator.isWindowLate


def lockgate_is_late(end: int, size: int, lateness: int, newest: int, delay: int) -> bool:
    """Whether lockgate's window operator sends the last record of [end - size, end) aside."""
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(float(delay))
    generator = strategy.create_generator(WatermarkGeneratorContext("w", 0, None, ManualClock()))
    output = RecordingWatermarkOutput()
    operator, late = _window_operator(size, lateness)
    operator.process_batch([stamped(("k", float(end - size), 1))])  # opens the window
    generator.on_event(("k", float(newest), 0), float(newest), output)
    generator.on_periodic_emit(output)
    operator.process_watermark(Watermark(output.current))
    operator.process_batch([stamped(("k", float(end - 1), 2))])
    return bool(late.drain())


def stamped(event: Event) -> tuple[float, Event]:
    """The record as it travels with event time on: its timestamp, then the event."""
    return event[1], event


def _window_operator(size: int, lateness: int) -> tuple[Operator, SideOutputCollector]:
    spec = WindowSpec(
        assigner=TumblingEventTimeWindows.of(float(size)),
        kind=WindowFunctionKind.REDUCE,
        function=lambda a, b: (a[0], b[1], a[2] + b[2]),
        allowed_lateness=float(lateness),
        late_tag=LATE,
    )
    node = OperatorNode(0, "w", "w", OperatorKind.WINDOW, spec, 1, True, lambda e: e[0])
    node.timestamped = True
    operator, late = create_operator(node, clock=ManualClock()), SideOutputCollector([LATE])
    operator.send_side_outputs_to(late)
    operator.open(RuntimeContext("w", 0, 1, 128, ManualClock(), operator.keyed_state))
    return operator, late


near_the_boundary = st.one_of(st.integers(-3, 3), st.integers(-(2**40), 2**40))


@given(
    size=st.integers(1, 2**20),
    window=st.integers(-(2**29), 2**29),
    lateness=st.integers(0, 2**40),
    delay=st.integers(0, 2**20),
    offset=near_the_boundary,
)
def test_a_record_is_late_exactly_when_flink_says_it_is(
    size: int, window: int, lateness: int, delay: int, offset: int
) -> None:
    end = (window + 1) * size
    newest = end + lateness + delay + offset  # offset 0: the watermark is at the boundary

    decided = lockgate_is_late(end, size, lateness, newest, delay)

    assert decided == flink_is_late(end, lateness, newest, delay)


@given(
    time=st.integers(-(2**40), 2**40),
    lateness=st.integers(0, 2**40),
    delay=st.integers(0, 2**20),
    offset=near_the_boundary,
)
def test_a_record_is_late_for_the_late_output_exactly_when_flink_says_it_is(
    time: int, lateness: int, delay: int, offset: int
) -> None:
    newest = time + lateness + delay + offset
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(float(delay))
    generator = strategy.create_generator(WatermarkGeneratorContext("w", 0, None, ManualClock()))
    output = RecordingWatermarkOutput()
    generator.on_event(float(newest), float(newest), output)
    generator.on_periodic_emit(output)

    decided = is_element_late(float(time), float(lateness), output.current)

    assert decided == (time + lateness <= newest - delay - 1)  # WindowOperator.isElementLate


def test_a_record_between_sliding_windows_goes_aside_only_when_late() -> None:
    spec = WindowSpec(
        assigner=SlidingEventTimeWindows.of(5.0, 10.0),  # [0, 5), [10, 15): a gap at [5, 10)
        kind=WindowFunctionKind.REDUCE,
        function=lambda a, b: a,
        late_tag=LATE,
    )
    node = OperatorNode(0, "w", "w", OperatorKind.WINDOW, spec, 1, True, lambda e: e[0])
    node.timestamped = True
    operator, late = create_operator(node, clock=ManualClock()), SideOutputCollector([LATE])
    operator.send_side_outputs_to(late)
    operator.open(RuntimeContext("w", 0, 1, 128, ManualClock(), operator.keyed_state))
    operator.process_watermark(Watermark(6.0))

    operator.process_batch([stamped(("k", 7.0, 1)), stamped(("k", 6.0, 2))])

    assert late.drain() == {LATE: [stamped(("k", 6.0, 2))]}


# Ends above the lowest float: below that there is only -inf.
finite = st.floats(math.nextafter(-sys.float_info.max, 0.0), allow_infinity=False)


@given(end=finite, lateness=st.floats(min_value=0.0, allow_nan=False, allow_infinity=False))
def test_a_window_is_gone_at_the_largest_float_below_its_exact_end_plus_lateness(
    end: float, lateness: float
) -> None:
    exact = Fraction(end) + Fraction(lateness)
    cleanup = cleanup_time(end, lateness)

    if exact > Fraction(sys.float_info.max):
        assert cleanup == sys.float_info.max
    else:
        assert Fraction(cleanup) < exact <= Fraction(math.nextafter(cleanup, math.inf))


async def late_records(stream: list[Event], *, size: float, lateness: float) -> list[Event]:
    """The records a tumbling window of ``size`` with ``lateness`` sends to its late output."""
    env = StreamEnvironment(parallelism=1, batch_size=1, auto_watermark_interval=0.0)
    monotonous = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event: event[1]
    )
    late = CollectSink[Event]()
    windowed = (
        env.from_source(CollectionSource(stream), uid="events", watermark_strategy=monotonous)
        .key_by(lambda event: event[0])
        .window(TumblingEventTimeWindows.of(size))
        .allowed_lateness(lateness)
        .side_output_late_data(LATE)
        .reduce(lambda a, b: (a[0], b[1], a[2] + b[2]), uid="sums")
    )
    windowed.sink_to(CollectSink[Any](), uid="out")
    windowed.side_output(LATE).sink_to(late, uid="late-out")
    await env.execute("lateness")
    return late.results


async def test_a_record_for_20_to_30_with_lateness_5_is_late_once_event_time_reaches_35() -> None:
    # A record at 35 brings the watermark to just below 35 (Flink: 34, the cleanup time).
    stream = [("a", 25.0, 1), ("a", 35.0, 2), ("a", 29.0, 3)]

    assert await late_records(stream, size=10.0, lateness=5.0) == [("a", 29.0, 3)]


async def test_a_record_for_0_to_10_with_lateness_10_is_late_once_event_time_reaches_20() -> None:
    stream = [("a", 5.0, 1), ("a", 20.0, 2), ("a", 9.0, 3)]

    assert await late_records(stream, size=10.0, lateness=10.0) == [("a", 9.0, 3)]


async def test_a_record_just_before_the_boundary_still_fires_its_window_again() -> None:
    stream = [("a", 25.0, 1), ("a", 34.0, 2), ("a", 29.0, 3)]

    assert await late_records(stream, size=10.0, lateness=5.0) == []
