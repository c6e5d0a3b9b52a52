"""The scenarios' function vocabulary on lockgate's side.

Each name here has a twin in scripts/flink_reference/Functions.java: the two compute the same
values and render them as the same JSON lists. Functions whose lockgate API is not on main yet
(custom triggers, evictors, window functions after reduce/aggregate) are built when a
job asks for them, from the names the event-time issue and DESIGN.md give that API, so this
module imports today.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import lockgate.engine
from lockgate.engine import (
    AggregateFunction,
    KeyedProcessFunction,
    ProcessContext,
    ProcessJoinContext,
    ProcessJoinFunction,
    ProcessWindowFunction,
    TimeWindow,
    WindowContext,
)

LONG_MAX = 2**63 - 1  # Flink's Long.MAX_VALUE: the end of time, and a global window's max timestamp


@dataclass(frozen=True, slots=True)
class Event:
    """A scenario's record: a key, an event time, a value, and a tag (side, branch or split)."""

    key: str
    time: float
    value: int
    tag: str | None = None


def feature(name: str) -> Any:
    """A public name of lockgate.engine that a feature not yet on main will add.

    Raises:
        AttributeError: naming what is missing, while the feature is not there.
    """
    return getattr(lockgate.engine, name)


def flink_time(time: float | None) -> int | None:
    """A lockgate time or watermark as Flink's milliseconds.

    Event times here are whole milliseconds: lockgate's watermark after a record at ``t`` is
    the float just below ``t - out_of_orderness``, Flink's is ``t - out_of_orderness - 1``;
    both say the same of every whole millisecond. Infinity is Flink's ``Long.MAX_VALUE``.
    """
    if time is None or time == -math.inf:
        return None
    if time == math.inf:
        return LONG_MAX
    return math.floor(time)


def render(out: Any) -> Any:
    """An output as the JSON list Flink's side renders it as."""
    if isinstance(out, Event):
        return [out.key, flink_time(out.time), out.value]
    if isinstance(out, tuple | list):
        return [render(item) for item in out]
    if isinstance(out, float):
        return flink_time(out)
    return out


def times_ten(e: Event) -> Event:
    """ "times_ten": the value times ten; key, time and tag kept."""
    return Event(e.key, e.time, e.value * 10, e.tag)


def forget_time(e: Event) -> Event:
    """ "forget_time": the time field becomes -1; only the record's timestamp keeps its time."""
    return Event(e.key, -1.0, e.value, e.tag)


MAPS: dict[str, Callable[[Event], Event]] = {"times_ten": times_ten, "forget_time": forget_time}


def add_up(a: Event, b: Event) -> Event:
    """ "sum": the latest time and the sum of values."""
    return Event(a.key, max(a.time, b.time), a.value + b.value, a.tag)


class Stats(AggregateFunction[Event, tuple[int, int, float, float], tuple[int, int, float, float]]):
    """ "stats": (count, sum of values, least time, greatest time); merges for sessions."""

    def create_accumulator(self) -> tuple[int, int, float, float]:
        return (0, 0, math.inf, -math.inf)

    def add(self, e: Event, acc: tuple[int, int, float, float]) -> tuple[int, int, float, float]:
        return (acc[0] + 1, acc[1] + e.value, min(acc[2], e.time), max(acc[3], e.time))

    def get_result(self, acc: tuple[int, int, float, float]) -> tuple[int, int, float, float]:
        return acc

    def merge(
        self, a: tuple[int, int, float, float], b: tuple[int, int, float, float]
    ) -> tuple[int, int, float, float]:
        return (a[0] + b[0], a[1] + b[1], min(a[2], b[2]), max(a[3], b[3]))


def bounds(context: WindowContext) -> tuple[float | None, float | None]:
    """A window's start and end; ``None`` for the global window."""
    window = context.window
    if isinstance(window, TimeWindow):
        return window.start, window.end
    return None, None


class Describe(ProcessWindowFunction[Event, tuple[Any, ...], Any]):
    """ "describe": (key, start, end, count, values sorted)."""

    def process(
        self, key: Any, context: WindowContext, elements: list[Event]
    ) -> Iterator[tuple[Any, ...]]:
        values = sorted(e.value for e in elements)
        yield (key, *bounds(context), len(values), values)


class DescribeReduced(ProcessWindowFunction[Event, tuple[Any, ...], Any]):
    """ "describe_reduced": after reduce, (key, start, end, time, value) of the reduced event."""

    def process(
        self, key: Any, context: WindowContext, elements: list[Event]
    ) -> Iterator[tuple[Any, ...]]:
        [e] = elements
        yield (key, *bounds(context), e.time, e.value)


class DescribeStats(ProcessWindowFunction[tuple[Any, ...], tuple[Any, ...], Any]):
    """ "describe_stats": after aggregate, (key, start, end, count, sum, least, greatest)."""

    def process(
        self, key: Any, context: WindowContext, elements: list[tuple[Any, ...]]
    ) -> Iterator[tuple[Any, ...]]:
        [result] = elements
        yield (key, *bounds(context), *result)


def every_n_and_end(count: int, *, purge: bool) -> Any:
    """ "every_n_and_end": fires every ``count`` records of a window and at its end.

    Flink's ``Trigger`` API as the issue names it for lockgate: ``on_element``,
    ``on_event_time``, ``on_processing_time``, ``clear``, a context with timers and
    partitioned state, and ``TriggerResult``.
    """
    trigger_base, result = feature("Trigger"), feature("TriggerResult")
    seen = feature("ReducingStateDescriptor")("seen", lambda a, b: a + b)

    class EveryNAndEnd(trigger_base):  # type: ignore[misc, valid-type]
        def on_element(self, element: Any, timestamp: float, window: Any, ctx: Any) -> Any:
            ctx.register_event_time_timer(window.max_timestamp)
            state = ctx.get_partitioned_state(seen)
            state.add(1)
            if state.get() >= count:
                state.clear()
                return result.FIRE_AND_PURGE if purge else result.FIRE
            return result.CONTINUE

        def on_event_time(self, time: float, window: Any, ctx: Any) -> Any:
            return result.FIRE if time == window.max_timestamp else result.CONTINUE

        def on_processing_time(self, time: float, window: Any, ctx: Any) -> Any:
            return result.CONTINUE

        def clear(self, window: Any, ctx: Any) -> None:
            ctx.delete_event_time_timer(window.max_timestamp)
            ctx.get_partitioned_state(seen).clear()

    return EveryNAndEnd()


def value_distance(a: Event, b: Event) -> float:
    """ "value_distance": how far apart two records' values are (a delta evictor's function)."""
    return float(abs(a.value - b.value))


def pair(left: Event, right: Event) -> tuple[Any, ...]:
    """ "pair": (key, left time, left value, right time, right value)."""
    return (left.key, left.time, left.value, right.time, right.value)


def groups(left: list[Event], right: list[Event]) -> list[tuple[Any, ...]]:
    """ "groups": (key, left values sorted, right values sorted) of a co-grouped window."""
    key = [e.key for e in [*left, *right]][-1]
    return [(key, sorted(e.value for e in left), sorted(e.value for e in right))]


class IntervalPair(ProcessJoinFunction[Event, Event, tuple[Any, ...]]):
    """ "pair" as a ``ProcessJoinFunction`` for an interval join."""

    def process_element(
        self, left: Event, right: Event, ctx: ProcessJoinContext
    ) -> list[tuple[Any, ...]]:
        return [pair(left, right)]


class Timers(KeyedProcessFunction[str, Event, tuple[Any, ...]]):
    """ "timers": emits each record with the watermark, sets a timer at time + each offset.

    A record emits ("element", key, time, value, watermark); a timer ("timer", key, time,
    watermark) and, at an even time, sets one at time + each follow-up.
    """

    def __init__(self, offsets: list[int], follow_ups: list[int]) -> None:
        self.offsets = offsets
        self.follow_ups = follow_ups

    def process_element(self, e: Event, ctx: ProcessContext[str]) -> Iterator[tuple[Any, ...]]:
        yield ("element", e.key, e.time, e.value, flink_time(ctx.current_watermark()))
        for offset in self.offsets:
            ctx.timer_service().register_event_time_timer(e.time + offset)

    def on_timer(self, timestamp: float, ctx: ProcessContext[str]) -> Iterator[tuple[Any, ...]]:
        yield ("timer", ctx.get_current_key(), timestamp, flink_time(ctx.current_watermark()))
        if timestamp % 2 == 0:
            for follow_up in self.follow_ups:
                ctx.timer_service().register_event_time_timer(timestamp + follow_up)


class WithTimestamp(KeyedProcessFunction[Any, Any, tuple[float, Any]]):
    """Emits (the record's timestamp, the record): how a probe reads output timestamps."""

    def process_element(self, value: Any, ctx: ProcessContext[Any]) -> Iterator[tuple[float, Any]]:
        yield (ctx.timestamp(), value)
