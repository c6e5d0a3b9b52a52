"""LoopLagMonitor: how late the event loop wakes a task that sleeps for a millisecond."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType

import anyio
from anyio.abc import TaskGroup

__all__ = ["LoopLag", "LoopLagMonitor"]


@dataclass(frozen=True, slots=True)
class LoopLag:
    """The lags measured so far, in seconds: how many, their p50, p99 and the largest.

    A lag is how much later than asked a sleep of ``interval`` seconds woke. Every call
    that holds the event loop (a blocking read, a long ``pickle.dumps``, a thread holding
    the GIL) shows up as a lag as long as it held it; so does a machine too busy to run the
    process. ``busy_max`` tells them apart: the largest lag during which the process itself
    ran, each lag counted only as far as the process's CPU time grew meanwhile. A stall of
    the process's own making counts in full; a wait for the machine's CPU, hardly at all.
    """

    samples: int
    p50: float
    p99: float
    max: float
    busy_max: float = 0.0

    @classmethod
    def of(cls, lags: Iterable[float], busy: Iterable[float] = ()) -> LoopLag:
        """The nearest-rank percentiles of ``lags``, the largest ``busy`` lag (zeros for none)."""
        ordered = sorted(lags)
        if not ordered:
            return cls(0, 0.0, 0.0, 0.0)
        p50, p99 = _percentile(ordered, 0.50), _percentile(ordered, 0.99)
        return cls(len(ordered), p50, p99, ordered[-1], max(busy, default=0.0))

    def __str__(self) -> str:
        return (
            f"loop lag over {self.samples} wake-ups: p50 {self.p50 * 1e3:.2f} ms, "
            f"p99 {self.p99 * 1e3:.2f} ms, max {self.max * 1e3:.2f} ms "
            f"(busy {self.busy_max * 1e3:.2f} ms)"
        )


class LoopLagMonitor:
    """A task in the host's event loop measuring its lag, while the ``async with`` lasts.

    It sleeps ``interval`` seconds (1 ms by default) again and again, and records how much
    later than that each sleep woke, on ``clock`` (``time.perf_counter``: real time, whatever
    clock the job runs on), and how much of it the process ran (``cpu_clock``,
    ``time.process_time``). ``statistics()`` reports them at any moment. Runs on asyncio
    and trio. The loop's own timer resolution is part of every lag (a few tenths of a
    millisecond on Linux): what a stall adds is far larger.
    """

    def __init__(
        self,
        *,
        interval: float = 0.001,
        clock: Callable[[], float] = time.perf_counter,
        cpu_clock: Callable[[], float] = time.process_time,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be positive; got {interval}")
        self.interval = interval
        self._clock = clock
        self._cpu_clock = cpu_clock
        self._lags: list[float] = []
        self._busy: list[float] = []
        self._waiters: list[tuple[int, anyio.Event]] = []
        self._group: TaskGroup | None = None

    async def __aenter__(self) -> LoopLagMonitor:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._measure)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        assert self._group is not None, "the monitor runs"
        self._group.cancel_scope.cancel()
        try:
            return await self._group.__aexit__(exc_type, exc, traceback)
        finally:
            self._group = None

    def statistics(self) -> LoopLag:
        """The lags measured so far (zeros before the first wake-up)."""
        return LoopLag.of(self._lags, self._busy)

    async def wait_measured(self, count: int) -> None:
        """Wait until ``count`` wake-ups were measured since the start (or ``reset``)."""
        if len(self._lags) < count:
            event = anyio.Event()
            self._waiters.append((count, event))
            await event.wait()

    def reset(self) -> None:
        """Forget the lags measured so far: measure a phase of its own from now."""
        self._lags.clear()
        self._busy.clear()

    async def _measure(self) -> None:
        clock, cpu_clock, interval = self._clock, self._cpu_clock, self.interval
        while True:
            started, cpu_started = clock(), cpu_clock()
            await anyio.sleep(interval)
            lag = max(0.0, clock() - started - interval)
            self._lags.append(lag)
            self._busy.append(min(lag, cpu_clock() - cpu_started))
            if self._waiters:
                self._wake_waiters()

    def _wake_waiters(self) -> None:
        measured = len(self._lags)
        for count, event in [waiter for waiter in self._waiters if waiter[0] <= measured]:
            self._waiters.remove((count, event))
            event.set()

    def __repr__(self) -> str:
        return f"<LoopLagMonitor {self.statistics()}>"


def _percentile(ordered: list[float], fraction: float) -> float:
    # The nearest-rank percentile of sorted values.
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]
