"""Key distributions: which key a modelled record carries, evenly spread or with hot keys."""

from __future__ import annotations

import bisect
import itertools
import random
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = ["KeyDistribution", "UniformKeys", "ZipfKeys"]


@runtime_checkable
class KeyDistribution(Protocol):
    """Keys ``0 .. count - 1`` drawn at random."""

    @property
    def count(self) -> int:
        """How many keys there are."""
        ...

    def draw(self, rng: random.Random) -> int:
        """One key, from ``rng`` only, so a seed repeats it."""
        ...


@dataclass(frozen=True, slots=True)
class UniformKeys:
    """Every one of ``count`` keys equally likely."""

    count: int

    def __post_init__(self) -> None:
        _check_count("UniformKeys", self.count)

    def draw(self, rng: random.Random) -> int:
        """One key, each as likely as any other."""
        return rng.randrange(self.count)


@dataclass(frozen=True, slots=True)
class ZipfKeys:
    """Hot keys: key ``k`` is drawn in proportion to ``1 / (k + 1) ** exponent``.

    Key 0 is the hottest. With ``exponent=1`` and 1,000 keys it comes with one record in
    about 7.5, the 10 hottest with about two in five.
    """

    count: int
    exponent: float = 1.0
    _cumulative: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_count("ZipfKeys", self.count)
        if not self.exponent >= 0:
            raise ValueError(f"ZipfKeys: exponent must be 0 or more; got {self.exponent}")
        weights = (1.0 / (rank + 1) ** self.exponent for rank in range(self.count))
        object.__setattr__(self, "_cumulative", tuple(itertools.accumulate(weights)))

    def probability(self, key: int) -> float:
        """How likely ``key`` is drawn."""
        weight: float = (key + 1) ** -self.exponent
        return weight / self._cumulative[-1]

    def draw(self, rng: random.Random) -> int:
        """One key, hot keys more often."""
        point = rng.random() * self._cumulative[-1]
        return min(bisect.bisect_right(self._cumulative, point), self.count - 1)


def _check_count(model: str, count: int) -> None:
    if not (isinstance(count, int) and count >= 1):
        raise ValueError(f"{model}: count must be a whole number of keys, 1 or more; got {count}")
