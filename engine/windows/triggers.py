"""The built-in triggers, each written against the ``Trigger`` contract as in Flink.

``EventTimeTrigger`` (the default of event-time assigners) fires when the watermark reaches
the window's end, and again for each late record within the allowed lateness.
``ProcessingTimeTrigger`` (the default of processing-time assigners) fires when the job's
clock does. ``CountTrigger.of(n)`` fires every ``n`` records of a window;
``PurgingTrigger.of(trigger)`` turns each firing of ``trigger`` into a fire-and-purge
(``count_window(n)`` is ``GlobalWindows`` with a purging count trigger).
``ContinuousEventTimeTrigger.of(interval)`` fires every ``interval`` of event time while the
window is open, and at its end.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from lockgate.engine.state import ReducingStateDescriptor
from lockgate.engine.windows.trigger import OnMergeContext, Trigger, TriggerContext, TriggerResult

__all__ = [
    "ContinuousEventTimeTrigger",
    "CountTrigger",
    "EventTimeTrigger",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "timed_trigger",
]

CONTINUE, FIRE = TriggerResult.CONTINUE, TriggerResult.FIRE
_COUNT = ReducingStateDescriptor[int]("count", reduce_function=operator.add)
_FIRE_TIME = ReducingStateDescriptor[float]("fire-time", reduce_function=min)


@dataclass(frozen=True)
class EventTimeTrigger(Trigger[Any, Any]):
    """Fires when the watermark passes the window's end (and for late records in lateness).

    The default of event-time assigners. A record added to a window the watermark has
    passed (within ``allowed_lateness``) fires it at once, with everything it holds.
    """

    @classmethod
    def create(cls) -> EventTimeTrigger:
        """The event-time trigger."""
        return cls()

    def on_element(
        self, element: Any, timestamp: float | None, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        """Fire a window the watermark has passed; else wait for its end."""
        end = window.max_timestamp
        if end <= ctx.current_watermark():
            return FIRE
        ctx.register_event_time_timer(end)
        return CONTINUE

    def on_event_time(self, time: float, window: Any, ctx: TriggerContext) -> TriggerResult:
        """Fire at the window's end."""
        return FIRE if time == window.max_timestamp else CONTINUE

    def can_merge(self) -> bool:
        """Session windows merge."""
        return True

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        """Wait for the merged window's end, unless the watermark passed it already."""
        end = window.max_timestamp
        if end > ctx.current_watermark():
            ctx.register_event_time_timer(end)

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        """Delete the timer at the window's end."""
        ctx.delete_event_time_timer(window.max_timestamp)


@dataclass(frozen=True)
class ProcessingTimeTrigger(Trigger[Any, Any]):
    """Fires when the job's clock passes the window's end.

    The default of processing-time assigners; the clock is the job's (a ``ManualClock`` in
    tests).
    """

    @classmethod
    def create(cls) -> ProcessingTimeTrigger:
        """The processing-time trigger."""
        return cls()

    def on_element(
        self, element: Any, timestamp: float | None, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        """Wait for the window's end on the clock."""
        ctx.register_processing_time_timer(window.max_timestamp)
        return CONTINUE

    def on_processing_time(self, time: float, window: Any, ctx: TriggerContext) -> TriggerResult:
        """Fire at the window's end."""
        return FIRE

    def can_merge(self) -> bool:
        """Session windows merge."""
        return True

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        """Wait for the merged window's end, unless the clock passed it already."""
        end = window.max_timestamp
        if end > ctx.current_processing_time():
            ctx.register_processing_time_timer(end)

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        """Delete the timer at the window's end."""
        ctx.delete_processing_time_timer(window.max_timestamp)


@dataclass(frozen=True)
class CountTrigger(Trigger[Any, Any]):
    """Fires each time the window has received ``count`` more records.

    The count is trigger state of the window. Without purging the window keeps its records,
    so each firing emits everything so far; time windows still end (and are cleaned up)
    with time, but only this trigger fires them.
    """

    count: int

    @classmethod
    def of(cls, count: int) -> CountTrigger:
        """Fire every ``count`` records."""
        return cls(count)

    def on_element(
        self, element: Any, timestamp: float | None, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        """Count the record; fire and start again at ``count``."""
        seen = ctx.get_partitioned_state(_COUNT)
        seen.add(1)
        if (seen.get() or 0) >= self.count:
            seen.clear()
            return FIRE
        return CONTINUE

    def can_merge(self) -> bool:
        """Merged windows add their counts."""
        return True

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        """Add the merged windows' counts."""
        ctx.merge_partitioned_state(_COUNT)

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        """Forget the count."""
        ctx.get_partitioned_state(_COUNT).clear()

    def problems(self) -> list[str]:
        """A count that is not a whole number >= 1."""
        good = isinstance(self.count, int) and not isinstance(self.count, bool)
        if good and self.count >= 1:
            return []
        return [f"CountTrigger needs a count >= 1; got {self.count!r}"]


@dataclass(frozen=True)
class PurgingTrigger(Trigger[Any, Any]):
    """``trigger``, with each of its firings a fire-and-purge: the window is emptied.

    So each firing emits only what came since the previous one.
    """

    trigger: Trigger[Any, Any]

    @classmethod
    def of(cls, trigger: Trigger[Any, Any]) -> PurgingTrigger:
        """Purge the window whenever ``trigger`` fires."""
        return cls(trigger)

    def on_element(
        self, element: Any, timestamp: float | None, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        """The wrapped trigger's answer, purging when it fires."""
        return _purging(self.trigger.on_element(element, timestamp, window, ctx))

    def on_event_time(self, time: float, window: Any, ctx: TriggerContext) -> TriggerResult:
        """The wrapped trigger's answer, purging when it fires."""
        return _purging(self.trigger.on_event_time(time, window, ctx))

    def on_processing_time(self, time: float, window: Any, ctx: TriggerContext) -> TriggerResult:
        """The wrapped trigger's answer, purging when it fires."""
        return _purging(self.trigger.on_processing_time(time, window, ctx))

    def can_merge(self) -> bool:
        """Whether the wrapped trigger merges."""
        return self.trigger.can_merge()

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        """The wrapped trigger's merge."""
        self.trigger.on_merge(window, ctx)

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        """The wrapped trigger's clear."""
        self.trigger.clear(window, ctx)

    def problems(self) -> list[str]:
        """The wrapped trigger's problems."""
        trigger: object = self.trigger
        if not isinstance(trigger, Trigger):
            return [f"PurgingTrigger.of() needs a Trigger; got {trigger!r}"]
        return trigger.problems()


def _purging(result: TriggerResult) -> TriggerResult:
    return TriggerResult.FIRE_AND_PURGE if result.is_fire else result


@dataclass(frozen=True)
class ContinuousEventTimeTrigger(Trigger[Any, Any]):
    """Fires every ``interval`` seconds of event time while the window is open, and at its end.

    Flink's: the first record of a window sets a timer at the next multiple of ``interval``
    (never past the window's end); each such timer fires the window and sets the next one.
    The next firing time is trigger state, so a restore keeps the rhythm.
    """

    interval: float

    @classmethod
    def of(cls, interval: float) -> ContinuousEventTimeTrigger:
        """Fire every ``interval`` seconds of event time."""
        return cls(interval)

    def on_element(
        self, element: Any, timestamp: float | None, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        """Fire a window the watermark passed; else set the timers of its end and its rhythm."""
        end = window.max_timestamp
        if end <= ctx.current_watermark():
            return FIRE
        ctx.register_event_time_timer(end)
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        if fire_time.get() is None and timestamp is not None:
            self._next(timestamp - timestamp % self.interval, window, ctx)
        return CONTINUE

    def on_event_time(self, time: float, window: Any, ctx: TriggerContext) -> TriggerResult:
        """Fire at the window's end, and at each firing time (then set the next)."""
        if time == window.max_timestamp:
            return FIRE
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        if fire_time.get() == time:
            fire_time.clear()
            self._next(time, window, ctx)
            return FIRE
        return CONTINUE

    def _next(self, time: float, window: Any, ctx: TriggerContext) -> None:
        next_time = min(time + self.interval, window.max_timestamp)
        ctx.get_partitioned_state(_FIRE_TIME).add(next_time)
        ctx.register_event_time_timer(next_time)

    def can_merge(self) -> bool:
        """Session windows merge."""
        return True

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        """Keep the earliest firing time of the merged windows."""
        ctx.merge_partitioned_state(_FIRE_TIME)
        next_time = ctx.get_partitioned_state(_FIRE_TIME).get()
        if next_time is not None:
            ctx.register_event_time_timer(next_time)

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        """Delete the next firing's timer and its time."""
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        next_time = fire_time.get()
        if next_time is not None:
            ctx.delete_event_time_timer(next_time)
        fire_time.clear()

    def problems(self) -> list[str]:
        """An interval that is not a positive number of seconds."""
        value = self.interval
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            return [f"ContinuousEventTimeTrigger needs an interval > 0 seconds; got {value!r}"]
        return []


def timed_trigger(trigger: Trigger[Any, Any]) -> Trigger[Any, Any]:
    """The trigger that decides the firing time: ``trigger``, or the one a purging one wraps."""
    while isinstance(trigger, PurgingTrigger):
        trigger = trigger.trigger
    return trigger
