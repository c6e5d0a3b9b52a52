"""Window assigners: which windows a record belongs to, by its time (Flink's WindowAssigner).

Time windows are half-open, ``[start, end)``; a window is complete once the watermark
reaches its ``max_timestamp``, the largest time below ``end`` (watermarks mean "nothing at
or below this time will come"). Tumbling windows do not overlap, sliding windows do, session
windows start as ``[time, time + gap)`` per record and merge while they overlap. The global
window holds every record of a key; only a trigger (``CountTrigger``) fires it. Pure: the
time of a record comes from the window operator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = [
    "EventTimeSessionWindows",
    "GlobalWindow",
    "GlobalWindows",
    "ProcessingTimeSessionWindows",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeWindow",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "Window",
    "WindowAssigner",
]


@dataclass(frozen=True, slots=True, order=True)
class TimeWindow:
    """The times ``start <= t < end``, in seconds of event time or of the job's clock.

    Ordered by start, then end. ``max_timestamp`` is the last time in it: a window is
    complete once the watermark (or the clock) reaches it. Session windows grow by
    ``cover``ing the windows they ``intersect``.
    """

    start: float
    end: float

    @property
    def max_timestamp(self) -> float:
        """The largest time in the window: the watermark at which it is complete."""
        return math.nextafter(self.end, -math.inf)

    def intersects(self, other: TimeWindow) -> bool:
        """Whether the two windows overlap or touch (then session windows merge)."""
        return self.start <= other.end and other.start <= self.end

    def cover(self, other: TimeWindow) -> TimeWindow:
        """The smallest window holding both."""
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))

    @property
    def state_key(self) -> tuple[float, float]:
        """How keyed state stores the window: plain data, so savepoints can hold it."""
        return (self.start, self.end)


@dataclass(frozen=True, slots=True)
class GlobalWindow:
    """The one window of ``GlobalWindows``: every record of a key, for all time.

    It never ends by time (``max_timestamp`` is infinite) and is never cleaned up: only a
    trigger such as ``CountTrigger`` fires it, and a ``PurgingTrigger`` empties it.
    """

    @property
    def max_timestamp(self) -> float:
        """Never complete by time."""
        return math.inf

    @property
    def state_key(self) -> tuple[str]:
        """How keyed state stores the window."""
        return ("global",)


Window = TimeWindow | GlobalWindow


def window_of(state_key: Any) -> Window:
    """The window a keyed state key stands for (see ``state_key``)."""
    return GlobalWindow() if state_key == ("global",) else TimeWindow(*state_key)


class WindowAssigner:
    """Assigns each record, by its time, to the windows it belongs to.

    ``is_event_time`` says whether the time is the record's event time (and windows complete
    with the watermark) or the job's clock when the record arrives. ``merges`` is true for
    session windows.
    """

    is_event_time: bool = True
    merges: bool = False

    def assign_windows(self, time: float) -> list[Window]:
        """The windows a record at ``time`` belongs to; ``time`` is finite (the runner checks)."""
        raise NotImplementedError

    def problems(self) -> list[str]:
        """What is wrong with the assigner's options, if anything."""
        return []


def _positive(name: str, value: float) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return [f"{name} must be a number of seconds > 0; got {value!r}"]
    return []


@dataclass(frozen=True)
class TumblingEventTimeWindows(WindowAssigner):
    """Windows of ``size`` seconds of event time, side by side: ``[k*size + offset, ...)``.

    Each record is in exactly one window. ``offset`` shifts the boundaries, e.g. to start
    days at a time zone's midnight. Fires when the watermark passes a window's end.
    """

    size: float
    offset: float = 0.0

    @classmethod
    def of(cls, size: float, offset: float = 0.0) -> TumblingEventTimeWindows:
        """Windows of ``size`` seconds, shifted by ``offset`` seconds (e.g. for a time zone)."""
        return cls(size, offset)

    def assign_windows(self, time: float) -> list[Window]:
        """The one window holding ``time``."""
        start = time - (time - self.offset) % self.size
        return [TimeWindow(start, start + self.size)]

    def problems(self) -> list[str]:
        """A size that is not a positive number of seconds."""
        return _positive("size", self.size)


@dataclass(frozen=True)
class TumblingProcessingTimeWindows(TumblingEventTimeWindows):
    """Tumbling windows on the job's clock: a record belongs to the window it arrives in.

    Fires when the clock passes a window's end; records are never late. Windows still open
    at the end of a bounded input are not emitted, as in Flink.
    """

    is_event_time = False


@dataclass(frozen=True)
class SlidingEventTimeWindows(WindowAssigner):
    """Windows of ``size`` seconds starting every ``slide`` seconds: a record is in several.

    A record belongs to about ``size / slide`` windows, each fired when the watermark
    passes its end: e.g. the last hour, every five minutes.
    """

    size: float
    slide: float
    offset: float = 0.0

    @classmethod
    def of(cls, size: float, slide: float, offset: float = 0.0) -> SlidingEventTimeWindows:
        """Windows of ``size`` seconds, one starting every ``slide`` seconds."""
        return cls(size, slide, offset)

    def assign_windows(self, time: float) -> list[Window]:
        """Every window holding ``time``, the latest first."""
        start = time - (time - self.offset) % self.slide
        windows: list[Window] = []
        while start + self.size > time:
            windows.append(TimeWindow(start, start + self.size))
            start -= self.slide
        return windows

    def problems(self) -> list[str]:
        """A size or slide that is not a positive number of seconds."""
        return _positive("size", self.size) + _positive("slide", self.slide)


@dataclass(frozen=True)
class SlidingProcessingTimeWindows(SlidingEventTimeWindows):
    """Sliding windows on the job's clock.

    As ``SlidingEventTimeWindows``, with the time a record arrives in place of its event
    time; windows fire when the clock passes their end.
    """

    is_event_time = False


@dataclass(frozen=True)
class EventTimeSessionWindows(WindowAssigner):
    """Per key, a window of activity that ends ``gap`` seconds after its latest record.

    Each record opens ``[time, time + gap)``; windows of a key that overlap or touch merge.
    """

    gap: float
    merges = True

    @classmethod
    def with_gap(cls, gap: float) -> EventTimeSessionWindows:
        """Sessions that close after ``gap`` seconds without a record."""
        return cls(gap)

    def assign_windows(self, time: float) -> list[Window]:
        """The record's own window, to be merged with the key's others."""
        return [TimeWindow(time, time + self.gap)]

    def problems(self) -> list[str]:
        """A gap that is not a positive number of seconds."""
        return _positive("gap", self.gap)


@dataclass(frozen=True)
class ProcessingTimeSessionWindows(EventTimeSessionWindows):
    """Session windows on the job's clock.

    A key's session closes ``gap`` seconds of the job's clock after its latest record
    arrived.
    """

    is_event_time = False


@dataclass(frozen=True)
class GlobalWindows(WindowAssigner):
    """One window per key holding all its records; needs a trigger, e.g. ``CountTrigger``.

    ``keyed.count_window(n)`` is this assigner with ``PurgingTrigger.of(CountTrigger.of(n))``:
    a window of every ``n`` records of a key.
    """

    is_event_time = False

    @classmethod
    def create(cls) -> GlobalWindows:
        """The global window assigner."""
        return cls()

    def assign_windows(self, time: float) -> list[Window]:
        """The global window."""
        return [GlobalWindow()]
