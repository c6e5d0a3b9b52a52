"""Arrival processes: when records come into a modelled source."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

__all__ = ["ArrivalProcess", "ConstantRate", "Poisson"]


@runtime_checkable
class ArrivalProcess(Protocol):
    """Arrivals at ``rate`` per second on average, the gaps between them drawn one by one."""

    @property
    def rate(self) -> float:
        """Arrivals per second, on average."""
        ...

    def gap(self, rng: random.Random) -> float:
        """Seconds from one arrival to the next, from ``rng`` only, so a seed repeats them."""
        ...

    def share(self, parts: int) -> ArrivalProcess:
        """The same process at ``rate / parts``: one of ``parts`` source subtasks' share."""
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

    def share(self, parts: int) -> ConstantRate:
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

    def share(self, parts: int) -> Poisson:
        """The process at ``rate / parts`` (a Poisson process split at random is Poisson)."""
        return replace(self, rate=self.rate / parts)


def _check_rate(model: str, rate: float) -> None:
    if not rate > 0 or math.isinf(rate):
        raise ValueError(
            f"{model}: rate must be a finite number of arrivals per second; got {rate}"
        )
