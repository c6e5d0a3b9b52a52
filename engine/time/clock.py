"""Clock: where the engine reads time, so tests and simulations can drive it."""

from __future__ import annotations

import collections
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import anyio
import anyio.lowlevel

__all__ = ["Clock", "ManualClock", "SystemClock", "wall_time_of"]


@runtime_checkable
class Clock(Protocol):
    """The engine's only source of time: a monotonic ``now()`` and a ``sleep``.

    Engine logic never reads time otherwise, so tests and the simulator can run the real
    engine on virtual time.
    """

    def now(self) -> float:
        """Seconds on a monotonic scale; only differences are meaningful."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait until ``now()`` has advanced by ``seconds``."""
        ...


class SystemClock:
    """Wall-clock time from the operating system's monotonic clock.

    ``now()`` never goes back; ``sleep`` waits on the event loop.
    """

    def now(self) -> float:
        """Return ``time.monotonic()``."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """Sleep on the event loop."""
        await anyio.sleep(seconds)

    def __repr__(self) -> str:
        return "<SystemClock>"


class ManualClock:
    """A clock that moves only when ``advance`` is called; for tests.

    Sleepers wake in deadline order when an ``advance`` reaches their deadline, never before;
    sleepers with the same deadline wake in the order they fell asleep. The order holds on
    any event loop: the sleepers an ``advance`` reaches wake one after another, each once the
    one before it has resumed, since trio (unlike asyncio) runs tasks woken together in either
    order.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, int, anyio.Event]] = []
        self._due: collections.deque[anyio.Event] = collections.deque()
        self._order = itertools.count()

    def now(self) -> float:
        """Return the current manual time."""
        return self._now

    async def sleep(self, seconds: float) -> None:
        """Wait until ``advance`` moves the clock ``seconds`` past now."""
        if seconds <= 0:
            await anyio.lowlevel.checkpoint()
            return
        sleeper = (self._now + seconds, next(self._order), anyio.Event())
        heapq.heappush(self._sleepers, sleeper)
        try:
            await sleeper[2].wait()
        finally:
            self._leave(sleeper)

    def advance(self, seconds: float) -> None:
        """Move time forward and wake, in deadline order, every sleeper whose deadline has come."""
        if seconds < 0:
            raise ValueError(f"a clock cannot go back; got advance({seconds})")
        self._now += seconds
        waking = bool(self._due)
        while self._sleepers and self._sleepers[0][0] <= self._now:
            self._due.append(heapq.heappop(self._sleepers)[2])
        if not waking:
            self._wake_next()

    @property
    def sleepers(self) -> int:
        """How many tasks are sleeping on this clock, their deadlines not reached yet."""
        return len(self._sleepers)

    def _leave(self, sleeper: tuple[float, int, anyio.Event]) -> None:
        # Three ways out: woken (wake the next due sleeper), cancelled while due (leave the
        # queue of due sleepers) or cancelled before its deadline (leave the heap).
        event = sleeper[2]
        if event.is_set():
            self._due.popleft()
            self._wake_next()
        elif event in self._due:
            self._due.remove(event)
        else:
            self._sleepers.remove(sleeper)
            heapq.heapify(self._sleepers)

    def _wake_next(self) -> None:
        if self._due:
            self._due[0].set()

    def __repr__(self) -> str:
        return f"<ManualClock now={self._now} sleepers={len(self._sleepers)}>"


def wall_time_of(clock: Clock) -> Callable[[], float]:
    """The time of day on ``clock``, for the stamps on a job's events and failures.

    A ``SystemClock`` gives the system's wall clock (``time.time``, seconds since the
    epoch); any other clock, a ``ManualClock`` or a simulation's virtual clock, its own
    ``now``, so that a job on virtual time stamps its events with virtual time.
    """
    return time.time if isinstance(clock, SystemClock) else clock.now
