"""Window test builders: a custom trigger, window functions that show what they saw, a model.

``EveryThirdAndAtEnd`` is the custom trigger of the event-time issue: it fires (or fires and
purges) every third record of a window and once more at the window's end, keeping its count
as trigger state. ``every_third_and_at_end`` computes what it emits with a plain loop.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Iterator

from lockgate.engine import (
    GlobalWindow,
    OnMergeContext,
    ProcessWindowFunction,
    ReducingStateDescriptor,
    TimeWindow,
    Trigger,
    TriggerContext,
    TriggerResult,
    WatermarkStrategy,
    WindowContext,
)

Event = tuple[str, float, int]  # (key, event time, value)
Fired = tuple[str, float, float, list[int]]  # (key, window start, window end, values seen)

MONOTONOUS = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
    lambda event: event[1]
)
SEEN = ReducingStateDescriptor[int]("seen", reduce_function=operator.add)


class EveryThirdAndAtEnd(Trigger[Event, TimeWindow]):
    """Fires every third record of a window and at its end; ``purging`` purges at the thirds.

    The count is trigger state (merged for session windows); the end is an event-time timer
    in the window, registered again for a merged window.
    """

    def __init__(self, *, purging: bool = False) -> None:
        self.purging = purging

    def on_element(
        self, element: Event, timestamp: float | None, window: TimeWindow, ctx: TriggerContext
    ) -> TriggerResult:
        ctx.register_event_time_timer(window.max_timestamp)
        seen = ctx.get_partitioned_state(SEEN)
        seen.add(1)
        if (seen.get() or 0) % 3:
            return TriggerResult.CONTINUE
        return TriggerResult.FIRE_AND_PURGE if self.purging else TriggerResult.FIRE

    def on_event_time(self, time: float, window: TimeWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp else TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: OnMergeContext) -> None:
        ctx.merge_partitioned_state(SEEN)
        ctx.register_event_time_timer(window.max_timestamp)

    def clear(self, window: TimeWindow, ctx: TriggerContext) -> None:
        ctx.delete_event_time_timer(window.max_timestamp)
        ctx.get_partitioned_state(SEEN).clear()


class Seen(ProcessWindowFunction[Event, Fired, str]):
    """Emits ``(key, start, end, values)`` per firing: exactly what the window held."""

    def process(self, key: str, context: WindowContext, elements: list[Event]) -> Iterator[Fired]:
        window = context.window
        if isinstance(window, GlobalWindow):
            yield (key, -1.0, -1.0, [e[2] for e in elements])
        else:
            yield (key, window.start, window.end, [e[2] for e in elements])


def every_third_and_at_end(events: list[Event], size: float, *, purging: bool) -> list[Fired]:
    """What ``EveryThirdAndAtEnd`` on tumbling windows of ``size`` emits, by a plain loop.

    Records come in order per key and window, and all of a window's records come before
    the watermark passes its end (records out of order by less than the watermark's bound).
    """
    held: dict[tuple[str, float], list[int]] = defaultdict(list)
    seen: dict[tuple[str, float], int] = defaultdict(int)
    fired: list[Fired] = []
    for key, time, value in events:
        start = time - time % size
        window = (key, start)
        held[window].append(value)
        seen[window] += 1
        if seen[window] % 3 == 0:
            fired.append((key, start, start + size, list(held[window])))
            if purging:
                held[window] = []
    for (key, start), values in held.items():
        if values:
            fired.append((key, start, start + size, list(values)))
    return fired
