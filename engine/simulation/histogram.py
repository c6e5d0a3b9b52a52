"""LatencyHistogram: durations counted in buckets 1% wide, for percentiles over long runs."""

from __future__ import annotations

import math
from collections.abc import Collection

__all__ = ["BUCKET_WIDTH", "LatencyHistogram"]

BUCKET_WIDTH = 0.01
"""Relative width of a bucket: a percentile is off by at most half of it (0.5%)."""

_LOG_WIDTH = math.log1p(BUCKET_WIDTH)


class LatencyHistogram:
    """Counts of durations in buckets ``[(1 + w)**(k - 1), (1 + w)**k)``, ``w`` = 1%.

    Memory grows with the spread of the values, not their number (an hour of records from
    1 ms to 1 h fits in some 1,500 buckets). ``count``, ``total``, ``low`` and ``high``
    are exact; a percentile is its bucket's geometric middle, within ``low`` and ``high``,
    so off by at most 0.5%. Values of 0 or less count in a bucket of their own, as 0.
    """

    __slots__ = ("buckets", "count", "high", "low", "total")

    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.count = 0
        self.total = 0.0
        self.low = math.inf
        self.high = -math.inf

    def add(self, value: float) -> None:
        """Count ``value``."""
        key = math.ceil(math.log(value) / _LOG_WIDTH) if value > 0 else _ZERO
        self.buckets[key] = self.buckets.get(key, 0) + 1
        self.count += 1
        self.total += value
        self.low = min(self.low, value)
        self.high = max(self.high, value)

    def add_all(self, values: Collection[float]) -> None:
        """Count every one of ``values``."""
        if not values:
            return
        buckets, log, width = self.buckets, math.log, _LOG_WIDTH
        for value in values:
            key = math.ceil(log(value) / width) if value > 0 else _ZERO
            buckets[key] = buckets.get(key, 0) + 1
        self.count += len(values)
        self.total += math.fsum(values)
        self.low = min(self.low, min(values))
        self.high = max(self.high, max(values))

    def merge(self, other: LatencyHistogram) -> None:
        """Count every value ``other`` counted."""
        for key, count in other.buckets.items():
            self.buckets[key] = self.buckets.get(key, 0) + count
        self.count += other.count
        self.total += other.total
        self.low = min(self.low, other.low)
        self.high = max(self.high, other.high)

    @property
    def mean(self) -> float | None:
        """The exact mean, ``None`` before any value."""
        return self.total / self.count if self.count else None

    def quantile(self, q: float) -> float | None:
        """The value below which a share ``q`` of the values lie; ``None`` before any value."""
        if not 0 <= q <= 1:
            raise ValueError(f"a quantile is between 0 and 1; got {q}")
        if not self.count:
            return None
        rank = max(1, math.ceil(q * self.count))
        seen = 0
        for key in sorted(self.buckets):
            seen += self.buckets[key]
            if seen >= rank:
                return self._value_of(key)
        return self.high

    def _value_of(self, key: int) -> float:
        if key == _ZERO:
            return 0.0
        middle = math.exp((key - 0.5) * _LOG_WIDTH)
        return min(max(middle, self.low), self.high)

    def __repr__(self) -> str:
        return f"<LatencyHistogram count={self.count} mean={self.mean}>"


_ZERO = -(2**62)  # below every bucket of a positive value
