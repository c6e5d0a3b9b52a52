"""LatencyHistogram: every duration of a run in a DDSketch, percentiles within 1%."""

from __future__ import annotations

import random

import pytest

from lockgate.engine.runtime.metrics.latency import LATENCY_BUCKETS, LatencyHistogram


def exact_quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))]


def test_percentiles_of_a_whole_run_are_within_one_percent() -> None:
    rng = random.Random(7)
    values = [rng.lognormvariate(-4.0, 1.0) for _ in range(200_000)]
    histogram = LatencyHistogram()
    for value in values:
        histogram.record(value)

    snapshot = histogram.snapshot()

    assert snapshot.count == 200_000
    assert snapshot.sum == pytest.approx(sum(values))
    for q, reported in ((0.5, snapshot.p50), (0.99, snapshot.p99), (0.999, snapshot.p999)):
        assert reported == pytest.approx(exact_quantile(values, q), rel=0.01)


def test_nothing_is_forgotten_however_many_durations_come_after() -> None:
    histogram = LatencyHistogram()
    histogram.record(30.0)  # one slow call, then a million fast ones
    for _ in range(1_000_000):
        histogram.record(0.001)

    assert histogram.snapshot().max == pytest.approx(30.0, rel=0.01)


def test_buckets_count_cumulatively_up_to_each_bound() -> None:
    histogram = LatencyHistogram()
    for value in (0.0002, 0.003, 0.003, 0.2, 7.0, 100.0):
        histogram.record(value)

    snapshot = histogram.snapshot()
    counts = dict(zip(snapshot.bounds, snapshot.buckets, strict=True))

    assert snapshot.bounds == list(LATENCY_BUCKETS)
    assert (counts[0.0005], counts[0.0025], counts[0.005], counts[0.25], counts[10.0]) == (
        1,
        1,
        3,
        4,
        5,
    )
    assert (counts[60.0], snapshot.count) == (5, 6)


def test_a_duration_of_zero_or_less_counts_in_the_lowest_bucket() -> None:
    histogram = LatencyHistogram()
    histogram.record(0.0)
    histogram.record(-0.5)  # a clock that went back

    snapshot = histogram.snapshot()

    assert (snapshot.count, snapshot.buckets[0], snapshot.p50) == (2, 2, 0.0)


def test_an_empty_histogram_has_no_percentiles() -> None:
    snapshot = LatencyHistogram().snapshot()

    assert (snapshot.count, snapshot.p50, snapshot.max, snapshot.mean) == (0, None, None, None)
    assert snapshot.buckets == [0] * len(LATENCY_BUCKETS)
