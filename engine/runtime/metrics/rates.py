"""RateWindow: per-second rates of cumulative counters over a rolling window ☐.

Counters (records in, busy seconds, ...) only grow, so a rate is the growth between two
readings divided by the time between them. A ``RateWindow`` keeps a few readings taken
when someone looked (``job.metrics()``, a Prometheus scrape, a dashboard's poll), never on
a timer of its own: a job nobody watches pays nothing for its rates. Pure: the caller
passes the time, read from the job's clock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

__all__ = ["RATE_WINDOW", "RateWindow"]

RATE_WINDOW = 5.0
"""Seconds a rate covers by default: long enough to smooth batches, short enough to follow."""


class RateWindow:
    """Rates per second of a fixed set of counters over the last ``window`` seconds.

    Invariants: readings are in time order, at least ``window / slots`` seconds apart
    (the newest may be closer; it replaces the one before), and exactly one of them lies at
    or before ``now - window`` once the window has been running that long: the baseline.
    ``rates(now, values)`` is ``(values - baseline) / (now - baseline time)``: over the
    window when it was read at least every ``window / slots`` seconds, over a longer span
    (back to the previous reading) when it was not, and since ``start`` while the window is
    younger than ``window``. Memory stays within ``slots + 2`` readings.
    """

    def __init__(
        self,
        start: float,
        initial: Sequence[float],
        *,
        window: float = RATE_WINDOW,
        slots: int = 10,
    ) -> None:
        if not window > 0:
            raise ValueError(f"a rate window spans more than 0 seconds; got {window}")
        if slots < 1:
            raise ValueError(f"a rate window keeps at least one slot; got {slots}")
        self.window = window
        self._spacing = window / slots
        self._readings: deque[tuple[float, tuple[float, ...]]] = deque()
        self._readings.append((start, tuple(initial)))

    def rates(self, now: float, values: Sequence[float]) -> tuple[float, ...]:
        """Record ``values`` read at ``now``; return each counter's growth per second.

        All rates are 0.0 when no time passed since the baseline (a reading at the start).
        """
        self._record(now, tuple(values))
        base_time, base = self._readings[0]
        span = now - base_time
        if span <= 0:
            return tuple(0.0 for _ in values)
        return tuple((value - before) / span for value, before in zip(values, base, strict=True))

    def _record(self, now: float, values: tuple[float, ...]) -> None:
        readings = self._readings
        if len(readings) > 1 and now - readings[-2][0] < self._spacing:
            readings[-1] = (now, values)  # too close to the one before: the newest replaces it
        else:
            readings.append((now, values))
        while len(readings) > 1 and readings[1][0] <= now - self.window:
            readings.popleft()  # the next one is a baseline too, and a more recent one

    def __len__(self) -> int:
        """How many readings the window holds now (at most ``slots + 2``)."""
        return len(self._readings)

    def __repr__(self) -> str:
        return f"<RateWindow window={self.window} readings={len(self._readings)}>"
