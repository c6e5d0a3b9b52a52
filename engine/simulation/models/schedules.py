"""Arrival processes whose rate changes with time: a rate schedule, and on/off bursts."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

__all__ = ["OnOff", "RateSchedule"]

Segment = tuple[float, float, float]
"""A stretch of time with one rate: its start, its end (``inf`` for the last) and the rate."""


@dataclass(frozen=True, slots=True)
class RateSchedule:
    """Arrivals at a rate that steps: ``steps`` are ``(from_time, rate)`` pairs, in order.

    The rate is 0 before the first step and each step's rate holds until the next one; the
    last holds forever, or with ``period`` the schedule repeats every ``period`` seconds. A
    rate of 0 is a pause. With ``poisson`` (the default) arrivals are a Poisson process of
    the rate at each moment (exponential gaps in the rate's integral, which is exact for a
    changing rate); without it they are evenly spaced, one each time the rate's integral
    grows by 1. A schedule that ends at rate 0 ends its arrivals: the source's input ends.
    """

    steps: tuple[tuple[float, float], ...]
    period: float | None = None
    poisson: bool = True
    _starts: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        steps: Sequence[tuple[float, float]],
        *,
        period: float | None = None,
        poisson: bool = True,
    ) -> None:
        steps = tuple((float(start), float(rate)) for start, rate in steps)
        _check_steps(steps, period)
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "period", period)
        object.__setattr__(self, "poisson", poisson)
        object.__setattr__(self, "_starts", tuple(start for start, _ in steps))

    @property
    def rate(self) -> float:
        """The long-run mean: over one period, or the last step's rate."""
        if self.period is None:
            return self.steps[-1][1]
        segments = itertools.islice(self._segments(), len(self.steps) + 1)
        covered = sum((end - start) * rate for start, end, rate in segments if end <= self.period)
        return covered / self.period

    def rate_at(self, time: float) -> float:
        """The rate at ``time`` seconds from the start."""
        if self.period is not None:
            time %= self.period
        for start, end, rate in itertools.islice(self._segments(), len(self.steps) + 1):
            if start <= time < end:
                return rate
        return 0.0

    def times(self, rng: random.Random) -> Iterator[float]:
        """Arrival times: each where the rate's integral has grown by a draw (or by 1)."""
        segments = self._segments()
        _, end, rate = next(segments)
        time = 0.0
        while True:
            need = rng.expovariate(1.0) if self.poisson else 1.0
            while not (rate > 0 and time + need / rate <= end):
                if math.isinf(end):
                    return  # rate 0 for ever: no more arrivals
                need -= rate * (end - time)
                time = end
                _, end, rate = next(segments)
            time += need / rate
            yield time

    def share(self, parts: int, index: int = 0) -> RateSchedule:
        """The same schedule at ``1 / parts`` of each rate."""
        steps = [(start, rate / parts) for start, rate in self.steps]
        return RateSchedule(steps, period=self.period, poisson=self.poisson)

    def _segments(self) -> Iterator[Segment]:
        """The stretches of constant rate from time 0 on; in each cycle 0 before the first step."""
        first = self._starts[0]
        cycles = itertools.count() if self.period is not None else range(1)
        for cycle in cycles:
            offset = cycle * (self.period or 0.0)
            if first > 0:
                yield offset, offset + first, 0.0
            for index, (start, rate) in enumerate(self.steps):
                yield offset + start, offset + self._end_of(index), rate

    def _end_of(self, index: int) -> float:
        if index + 1 < len(self.steps):
            return self.steps[index + 1][0]
        return self.period if self.period is not None else math.inf


@dataclass(frozen=True, slots=True)
class OnOff:
    """Bursts: ``rate`` arrivals per second for ``on`` seconds, then none for ``off``, again.

    The first burst starts at once. Arrivals within a burst are a Poisson process, or evenly
    spaced without ``poisson``. The long-run rate is ``rate * on / (on + off)``.
    """

    peak: float
    on: float
    off: float
    poisson: bool = True

    def __post_init__(self) -> None:
        for name, value in (("peak", self.peak), ("on", self.on), ("off", self.off)):
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"OnOff: {name} must be finite and more than 0; got {value}")

    @property
    def schedule(self) -> RateSchedule:
        """The same bursts as a repeating ``RateSchedule``."""
        steps = [(0.0, self.peak), (self.on, 0.0)]
        return RateSchedule(steps, period=self.on + self.off, poisson=self.poisson)

    @property
    def rate(self) -> float:
        """``peak * on / (on + off)``."""
        return self.peak * self.on / (self.on + self.off)

    def times(self, rng: random.Random) -> Iterator[float]:
        """The arrival times of the bursts."""
        return self.schedule.times(rng)

    def share(self, parts: int, index: int = 0) -> OnOff:
        """The same bursts at ``peak / parts``."""
        return OnOff(self.peak / parts, self.on, self.off, self.poisson)


def _check_steps(steps: tuple[tuple[float, float], ...], period: float | None) -> None:
    if not steps:
        raise ValueError("RateSchedule: give at least one (from_time, rate) step")
    starts = [start for start, _ in steps]
    if starts[0] < 0 or any(b <= a for a, b in itertools.pairwise(starts)):
        raise ValueError(f"RateSchedule: step times must be 0 or more and increasing; got {starts}")
    for start, rate in steps:
        if not (rate >= 0 and math.isfinite(rate)):
            raise ValueError(
                f"RateSchedule: the rate from {start:g} s must be finite and 0 or more; got {rate}"
            )
    if period is not None and not (math.isfinite(period) and period > starts[-1]):
        raise ValueError(
            f"RateSchedule: period must be finite and after the last step ({starts[-1]:g} s); "
            f"got {period}"
        )
