"""Arrival processes: the gaps between arrivals, and a subtask's share of them."""

from __future__ import annotations

import random
import statistics

import pytest

from lockgate.engine.simulation import ConstantRate, Poisson


def test_a_constant_rate_spaces_arrivals_exactly() -> None:
    rng = random.Random(1)

    assert [ConstantRate(1_000.0).gap(rng) for _ in range(3)] == [0.001] * 3


def test_poisson_gaps_average_to_one_over_the_rate() -> None:
    rng = random.Random(1)
    gaps = [Poisson(80.0).gap(rng) for _ in range(20_000)]

    assert statistics.fmean(gaps) == pytest.approx(1 / 80.0, rel=0.03)
    assert statistics.stdev(gaps) == pytest.approx(1 / 80.0, rel=0.03)  # exponential


def test_a_share_of_a_process_has_its_part_of_the_rate() -> None:
    assert Poisson(90.0).share(3) == Poisson(30.0)
    assert ConstantRate(90.0).share(3) == ConstantRate(30.0)


@pytest.mark.parametrize("rate", [0.0, -1.0, float("inf"), float("nan")])
def test_a_rate_that_is_not_a_finite_positive_number_is_refused(rate: float) -> None:
    with pytest.raises(ValueError, match="Poisson: rate must be a finite number"):
        Poisson(rate)
