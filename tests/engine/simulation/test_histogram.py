"""LatencyHistogram: exact count and mean, percentiles within half a percent."""

from __future__ import annotations

import random

import pytest

from lockgate.engine.simulation.histogram import LatencyHistogram


def filled(values: list[float]) -> LatencyHistogram:
    histogram = LatencyHistogram()
    histogram.add_all(values)
    return histogram


def test_count_mean_and_extremes_are_exact() -> None:
    histogram = filled([0.01, 0.02, 0.06])

    assert (histogram.count, histogram.low, histogram.high) == (3, 0.01, 0.06)
    assert histogram.mean == pytest.approx(0.03)


def test_percentiles_are_within_half_a_percent_of_the_exact_ones() -> None:
    rng = random.Random(1)
    values = sorted(rng.expovariate(20.0) for _ in range(100_000))
    histogram = filled(values)

    for q in (0.5, 0.99, 0.999):
        exact = values[int(q * len(values)) - 1]
        assert histogram.quantile(q) == pytest.approx(exact, rel=0.006)


def test_zero_durations_are_counted_as_zero() -> None:
    assert filled([0.0, 0.0, 1.0]).quantile(0.5) == 0.0


def test_a_merged_histogram_counts_both() -> None:
    merged = filled([1.0, 2.0])
    merged.merge(filled([3.0]))

    assert (merged.count, merged.high, merged.quantile(1.0)) == (3, 3.0, 3.0)


def test_an_empty_histogram_has_no_mean_and_no_percentile() -> None:
    assert (LatencyHistogram().mean, LatencyHistogram().quantile(0.99)) == (None, None)


def test_a_quantile_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and 1; got 99"):
        filled([1.0]).quantile(99)
