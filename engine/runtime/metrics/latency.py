"""LatencyHistogram: durations over a whole run in a DDSketch, percentiles within 1%.

A DDSketch (Datadog's ``ddsketch`` library) keeps counts in logarithmic bins: any quantile
it answers is within ``RELATIVE_ACCURACY`` of the true one, however many values it holds,
in memory that grows with the range of the values (a few hundred bins from a microsecond to
an hour), not with their number. ``snapshot()`` turns it into ``LatencyMetrics``, plain
data that carries Prometheus-style cumulative bucket counts as well.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ddsketch.ddsketch import BaseDDSketch
from ddsketch.mapping import LogarithmicMapping
from ddsketch.store import DenseStore

__all__ = ["LATENCY_BUCKETS", "RELATIVE_ACCURACY", "LatencyHistogram", "LatencyMetrics"]

RELATIVE_ACCURACY = 0.01
"""How far a reported quantile may be from the true one, relative to it."""

LATENCY_BUCKETS: tuple[float, ...] = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)
"""Upper bounds, in seconds, of the cumulative buckets a snapshot counts (then +Inf)."""


@dataclass(frozen=True, slots=True)
class LatencyMetrics:
    """Durations recorded since the start of an attempt, in seconds.

    ``count`` and ``sum`` are exact; ``min``, ``max`` and the percentiles are within 1% of
    the true ones. ``buckets[i]`` counts the durations of at most ``bounds[i]`` seconds (within
    1% of the bound): cumulative, as Prometheus histograms count, with ``count`` as +Inf.
    Every value is ``None`` (the buckets 0) before the first duration.
    """

    count: int
    sum: float
    min: float | None
    max: float | None
    p50: float | None
    p95: float | None
    p99: float | None
    p999: float | None
    bounds: list[float]
    buckets: list[int]

    @property
    def mean(self) -> float | None:
        """The mean duration, or ``None`` before the first."""
        return self.sum / self.count if self.count else None


class LatencyHistogram:
    """Records durations and answers their distribution over everything it recorded.

    ``record`` costs one logarithm and a list update (about 0.4 µs); nothing is ever
    dropped. Durations are seconds; negative ones (a clock that went back) count as 0.
    """

    __slots__ = ("_mapping", "_sketch", "_store")

    def __init__(self) -> None:
        self._mapping = LogarithmicMapping(RELATIVE_ACCURACY)
        self._store = DenseStore()
        self._sketch = BaseDDSketch(self._mapping, self._store, DenseStore(), 0.0)

    def record(self, seconds: float) -> None:
        """Count one duration of ``seconds``."""
        self._sketch.add(seconds if seconds > 0 else 0.0)

    @property
    def count(self) -> int:
        """How many durations were recorded."""
        return int(self._sketch.count)

    def snapshot(self) -> LatencyMetrics:
        """The distribution now, as plain data."""
        sketch = self._sketch
        count = int(sketch.count)
        quantile = sketch.get_quantile_value
        return LatencyMetrics(
            count=count,
            sum=float(sketch.sum),
            min=quantile(0.0),
            max=quantile(1.0),
            p50=quantile(0.5),
            p95=quantile(0.95),
            p99=quantile(0.99),
            p999=quantile(0.999),
            bounds=list(LATENCY_BUCKETS),
            buckets=self._cumulative(),
        )

    def _cumulative(self) -> list[int]:
        # A value lands in bin key(value); every value in a bin up to key(bound) is at most
        # the bound within the relative accuracy.
        store, mapping = self._store, self._mapping
        zeros = int(self._sketch.count - store.count)
        counts, running, position = [], zeros, 0
        bins, offset = store.bins, store.offset
        for bound in LATENCY_BUCKETS:
            last = mapping.key(bound) - offset
            while position < len(bins) and position <= last:
                running += int(bins[position])
                position += 1
            counts.append(running)
        return counts

    def __repr__(self) -> str:
        p50 = self._sketch.get_quantile_value(0.5)
        shown = "-" if p50 is None or math.isnan(p50) else f"{p50:.6g}"
        return f"<LatencyHistogram count={self.count} p50={shown}>"
