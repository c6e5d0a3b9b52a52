"""Service-time distributions: how long a modelled sink or service takes per record or call."""

from __future__ import annotations

import csv
import json
import math
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = ["Constant", "Distribution", "Empirical", "Exponential", "LogNormal"]


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


@dataclass(frozen=True, slots=True, init=False)
class Empirical:
    """Measured service times: each draw is one of ``samples``, all equally likely.

    The distribution of a real service, from its logs or a load test: the draws reproduce
    its mean, its percentiles and its tail as they were measured (a bootstrap).
    ``Empirical.from_file(path)`` reads the samples from a JSON list or a CSV file (its
    first column, or the column named ``column``).
    """

    samples: tuple[float, ...]

    def __init__(self, samples: Sequence[float]) -> None:
        values = tuple(float(sample) for sample in samples)
        if not values:
            raise ValueError("Empirical: give at least one sample, in seconds")
        for value in values:
            _check_positive("Empirical", "every sample", value, zero=True)
        object.__setattr__(self, "samples", values)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, column: str | None = None) -> Empirical:
        """The samples of a ``.json`` list, or of a CSV file's ``column`` (or first column)."""
        file = Path(path)
        if file.suffix == ".json":
            return cls(json.loads(file.read_text()))
        with file.open(newline="") as opened:
            rows = list(csv.reader(opened))
        header, body = (rows[0], rows[1:]) if rows and not _numeric(rows[0][0]) else ([], rows)
        index = header.index(column) if column is not None and column in header else 0
        if column is not None and column not in header:
            raise ValueError(f"Empirical: {file} has no column '{column}'")
        return cls([float(row[index]) for row in body if row])

    @property
    def mean(self) -> float:
        """The mean of the samples."""
        return math.fsum(self.samples) / len(self.samples)

    def draw(self, rng: random.Random) -> float:
        """One of the samples, at random."""
        return self.samples[int(rng.random() * len(self.samples))]

    def __repr__(self) -> str:
        return f"Empirical({len(self.samples)} samples, mean {self.mean:g} s)"


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_positive(model: str, name: str, value: float, *, zero: bool = False) -> None:
    if not (value >= 0 if zero else value > 0) or math.isinf(value):
        least = "0 or more" if zero else "more than 0"
        raise ValueError(f"{model}: {name} must be finite and {least}; got {value}")
