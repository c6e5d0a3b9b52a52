"""Timers: per-key event-time and processing-time timers, kept in keyed state.

A ``KeyedProcessFunction`` registers timers through ``ctx.timer_service()``; its
``on_timer`` runs when the watermark (event time) or the job's clock (processing time)
reaches one. Timers live in the operator's keyed state, one table per time domain (key ->
its timestamps), so checkpoints and savepoints hold them, and rescaling moves them with
their key groups; a heap orders them for firing. No event loop here.
"""

from __future__ import annotations

import enum
import heapq
import itertools
import math
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from lockgate.engine.state import KeyedStateBackend, ValueStateDescriptor
from lockgate.engine.time.clock import Clock

__all__ = ["TIMER_STATES", "KeyedTimers", "TimeDomain", "TimerQueue", "TimerService"]

_EVENT_TIMERS = ValueStateDescriptor[tuple[float, ...]]("__event_time_timers__")
_PROCESSING_TIMERS = ValueStateDescriptor[tuple[float, ...]]("__processing_time_timers__")
TIMER_STATES = frozenset({_EVENT_TIMERS.name, _PROCESSING_TIMERS.name})
"""The names of the keyed states that hold an operator's timers."""


class TimeDomain(enum.Enum):
    """Which time a timer follows: the watermark, or the job's clock.

    ``ctx.time_domain`` tells ``on_timer`` which one fired: an event-time timer fires when
    the watermark reaches it, a processing-time timer when the job's clock does.
    """

    EVENT_TIME = "event-time"
    PROCESSING_TIME = "processing-time"


class TimerQueue:
    """The timers of one time domain for every key of a subtask.

    ``table`` (key -> sorted timestamps, in keyed state) is the truth: checkpoints take it,
    and a queue built on a restored table finds every timer again. A heap orders them by
    timestamp; a timer deleted from the table is skipped when the heap reaches it. A key
    has at most one timer per timestamp, and no timer is at NaN (it would compare false with
    every time, and the heap would stop firing the timers behind it).
    """

    __slots__ = ("_heap", "_order", "_table")

    def __init__(self, table: MutableMapping[Any, tuple[float, ...]]) -> None:
        self._table = table
        self._order = itertools.count()
        self._heap = [
            (timestamp, next(self._order), key)
            for key, timestamps in table.items()
            for timestamp in timestamps
        ]
        heapq.heapify(self._heap)

    def register(self, key: Any, timestamp: float) -> None:
        """Add a timer for ``key`` at ``timestamp`` (a second one there is ignored).

        Raises:
            ValueError: for a NaN ``timestamp``, which the heap could not order.
        """
        if math.isnan(timestamp):
            raise ValueError(
                f"a timer for key {key!r} at NaN would never fire and would hold back every "
                "later timer; register timers at a number (inf fires at the end of input)"
            )
        timestamps = self._table.get(key, ())
        if timestamp in timestamps:
            return
        self._table[key] = tuple(sorted((*timestamps, timestamp)))
        heapq.heappush(self._heap, (timestamp, next(self._order), key))

    def delete(self, key: Any, timestamp: float) -> None:
        """Remove the timer of ``key`` at ``timestamp``, if there is one."""
        timestamps = self._table.get(key, ())
        if timestamp not in timestamps:
            return
        remaining = tuple(t for t in timestamps if t != timestamp)
        if remaining:
            self._table[key] = remaining
        else:
            del self._table[key]

    def pop_due(self, time: float) -> Iterator[tuple[Any, float]]:
        """Remove and yield ``(key, timestamp)`` of each timer at or below ``time``, in order.

        Lazily: a timer registered at or below ``time`` while iterating is yielded too.
        """
        heap = self._heap
        while heap and heap[0][0] <= time:
            timestamp, _, key = heapq.heappop(heap)
            if self._is_registered(key, timestamp):
                self.delete(key, timestamp)
                yield key, timestamp

    def next_timestamp(self) -> float | None:
        """The earliest timer's timestamp, or ``None`` without timers."""
        heap = self._heap
        while heap and not self._is_registered(heap[0][2], heap[0][0]):
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def _is_registered(self, key: Any, timestamp: float) -> bool:
        return timestamp in self._table.get(key, ())

    def __len__(self) -> int:
        return sum(len(timestamps) for timestamps in self._table.values())

    def __repr__(self) -> str:
        return f"<TimerQueue next={self.next_timestamp()}>"


class KeyedTimers:
    """An operator subtask's timers: an event-time and a processing-time ``TimerQueue``."""

    __slots__ = ("event_time", "processing_time")

    def __init__(self, store: KeyedStateBackend) -> None:
        self.event_time = TimerQueue(store.table(_EVENT_TIMERS))
        self.processing_time = TimerQueue(store.table(_PROCESSING_TIMERS))

    def queue(self, domain: TimeDomain) -> TimerQueue:
        """The queue of ``domain``."""
        return self.event_time if domain is TimeDomain.EVENT_TIME else self.processing_time


class TimerService:
    """What a process function uses to read time and set timers for the current key.

    Flink's ``TimerService``. An event-time timer fires once the watermark reaches its
    timestamp (one registered at or below the current watermark fires with the next
    watermark); a processing-time timer fires once the job's clock does. Either calls the
    function's ``on_timer(timestamp, ctx)`` under the timer's key. A key has at most one
    timer per timestamp and domain; a timer at NaN is refused with ``ValueError``. Timers
    are part of checkpoints and savepoints.
    """

    __slots__ = ("_clock", "_store", "_timers", "_watermark")

    def __init__(
        self,
        timers: KeyedTimers,
        clock: Clock,
        store: KeyedStateBackend,
        watermark: Callable[[], float],
    ) -> None:
        self._timers = timers
        self._clock = clock
        self._store = store
        self._watermark = watermark

    def current_processing_time(self) -> float:
        """The job's clock now (seconds on its monotonic scale)."""
        return self._clock.now()

    def current_watermark(self) -> float:
        """The operator's watermark (``-inf`` before the first one)."""
        return self._watermark()

    def register_event_time_timer(self, timestamp: float) -> None:
        """Call ``on_timer`` for the current key once the watermark reaches ``timestamp``."""
        self._timers.event_time.register(self._store.current_key, timestamp)

    def register_processing_time_timer(self, timestamp: float) -> None:
        """Call ``on_timer`` for the current key once the clock reaches ``timestamp``."""
        self._timers.processing_time.register(self._store.current_key, timestamp)

    def delete_event_time_timer(self, timestamp: float) -> None:
        """Forget the current key's event-time timer at ``timestamp``, if any."""
        self._timers.event_time.delete(self._store.current_key, timestamp)

    def delete_processing_time_timer(self, timestamp: float) -> None:
        """Forget the current key's processing-time timer at ``timestamp``, if any."""
        self._timers.processing_time.delete(self._store.current_key, timestamp)

    def __repr__(self) -> str:
        return (
            f"<TimerService event={self._timers.event_time!r} "
            f"processing={self._timers.processing_time!r}>"
        )
