"""Arrival processes: when records come into a modelled source."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

__all__ = ["ArrivalProcess", "ConstantRate", "Poisson"]


@runtime_checkable
class ArrivalProcess(Protocol):
    """Arrivals at ``rate`` per second in the long run, their times drawn one by one.

    ``times(rng)`` yields the arrival times in seconds from the process's start, in order,
    drawing only from ``rng`` (so a seed repeats them); it ends when the process does (a
    replayed trace), and never for the others. ``share(parts, index)`` is what one of
    ``parts`` source subtasks, number ``index``, gets of it.
    """

    @property
    def rate(self) -> float:
        """Arrivals per second, on average over the long run."""
        ...

    def times(self, rng: random.Random) -> Iterator[float]:
        """The arrival times from the start, in order, from ``rng`` only."""
        ...

    def share(self, parts: int, index: int = 0) -> ArrivalProcess:
        """Subtask ``index``'s share of the process split over ``parts`` subtasks."""
        ...


@dataclass(frozen=True, slots=True)
class ConstantRate:
    """One arrival every ``1 / rate`` seconds exactly."""

    rate: float

    def __post_init__(self) -> None:
        _check_rate("ConstantRate", self.rate)

    def gap(self, rng: random.Random) -> float:
        """``1 / rate``, drawing nothing."""
        return 1.0 / self.rate

    def times(self, rng: random.Random) -> Iterator[float]:
        """``1 / rate``, ``2 / rate``, ... (summed gap by gap)."""
        return _gaps(self.gap, rng)

    def share(self, parts: int, index: int = 0) -> ConstantRate:
        """The process at ``rate / parts``."""
        return replace(self, rate=self.rate / parts)


@dataclass(frozen=True, slots=True)
class Poisson:
    """Arrivals independent of each other, ``rate`` per second: exponential gaps (M/M/1's)."""

    rate: float

    def __post_init__(self) -> None:
        _check_rate("Poisson", self.rate)

    def gap(self, rng: random.Random) -> float:
        """One exponential gap."""
        return rng.expovariate(self.rate)

    def times(self, rng: random.Random) -> Iterator[float]:
        """The sums of exponential gaps."""
        return _gaps(self.gap, rng)

    def share(self, parts: int, index: int = 0) -> Poisson:
        """The process at ``rate / parts`` (a Poisson process split at random is Poisson)."""
        return replace(self, rate=self.rate / parts)


def _gaps(gap: _Gap, rng: random.Random) -> Iterator[float]:
    time = 0.0
    while True:
        time += gap(rng)
        yield time


class _Gap(Protocol):
    def __call__(self, rng: random.Random, /) -> float: ...


def _check_rate(model: str, rate: float) -> None:
    if not rate > 0 or math.isinf(rate):
        raise ValueError(
            f"{model}: rate must be a finite number of arrivals per second; got {rate}"
        )
