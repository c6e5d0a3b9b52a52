"""Service-time distributions: how long a modelled sink or service takes per record or call."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = ["Constant", "Distribution", "Exponential", "LogNormal"]


@runtime_checkable
class Distribution(Protocol):
    """Seconds drawn at random; ``mean`` is what the draws average to."""

    @property
    def mean(self) -> float:
        """The mean of the draws, in seconds."""
        ...

    def draw(self, rng: random.Random) -> float:
        """One draw, in seconds (0 or more), from ``rng`` only, so a seed repeats it."""
        ...


@dataclass(frozen=True, slots=True)
class Constant:
    """Always ``seconds``."""

    seconds: float

    def __post_init__(self) -> None:
        _check_positive("Constant", "seconds", self.seconds, zero=True)

    @property
    def mean(self) -> float:
        """``seconds``."""
        return self.seconds

    def draw(self, rng: random.Random) -> float:
        """``seconds``, drawing nothing."""
        return self.seconds


@dataclass(frozen=True, slots=True)
class Exponential:
    """Exponentially distributed, ``rate`` per second (mean ``1 / rate``): M/M/1's service."""

    rate: float

    def __post_init__(self) -> None:
        _check_positive("Exponential", "rate", self.rate)

    @property
    def mean(self) -> float:
        """``1 / rate``."""
        return 1.0 / self.rate

    def draw(self, rng: random.Random) -> float:
        """One exponential draw."""
        return rng.expovariate(self.rate)


@dataclass(frozen=True, slots=True)
class LogNormal:
    """Log-normally distributed with the given ``mean`` and the log's deviation ``sigma``.

    The shape of most remote calls: a typical time and a long tail, longer as ``sigma``
    grows (0.5 puts the p99 at about 2.6 times the median).
    """

    mean: float
    sigma: float = 0.5
    _mu: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_positive("LogNormal", "mean", self.mean)
        _check_positive("LogNormal", "sigma", self.sigma, zero=True)
        object.__setattr__(self, "_mu", math.log(self.median))

    @property
    def median(self) -> float:
        """The median draw, ``mean * exp(-sigma**2 / 2)``."""
        return self.mean * math.exp(-(self.sigma**2) / 2)

    def draw(self, rng: random.Random) -> float:
        """One log-normal draw."""
        return rng.lognormvariate(self._mu, self.sigma)


def _check_positive(model: str, name: str, value: float, *, zero: bool = False) -> None:
    if not (value >= 0 if zero else value > 0) or math.isinf(value):
        least = "0 or more" if zero else "more than 0"
        raise ValueError(f"{model}: {name} must be finite and {least}; got {value}")
