"""Service-time distributions: their draws come from the generator given, and average out."""

from __future__ import annotations

import random
import statistics

import pytest

from lockgate.engine.simulation import (
    Constant,
    Distribution,
    Empirical,
    Exponential,
    LogNormal,
)


def draws(distribution: Distribution, count: int = 20_000, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [distribution.draw(rng) for _ in range(count)]


def test_a_constant_is_always_the_same() -> None:
    assert set(draws(Constant(0.01), count=10)) == {0.01}


def test_exponential_draws_average_to_one_over_the_rate() -> None:
    assert statistics.fmean(draws(Exponential(100.0))) == pytest.approx(0.01, rel=0.03)
    assert Exponential(100.0).mean == 0.01


def test_log_normal_draws_average_to_the_mean_with_a_lower_median() -> None:
    model = LogNormal(0.02, sigma=0.5)
    values = draws(model)

    assert statistics.fmean(values) == pytest.approx(0.02, rel=0.03)
    assert statistics.median(values) == pytest.approx(model.median, rel=0.03)
    assert model.median < model.mean


def test_the_same_seed_gives_the_same_draws() -> None:
    assert draws(LogNormal(0.02), seed=3) == draws(LogNormal(0.02), seed=3)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Constant(-1.0), "Constant: seconds must be finite and 0 or more; got -1"),
        (lambda: Exponential(0.0), "Exponential: rate must be finite and more than 0; got 0"),
        (lambda: LogNormal(0.01, sigma=-0.5), "LogNormal: sigma must be finite and 0 or more"),
    ],
)
def test_a_distribution_that_cannot_be_is_refused_naming_the_option(make, message) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_empirical_draws_are_the_measured_samples_in_their_proportions() -> None:
    model = Empirical([0.01, 0.01, 0.01, 0.1])
    values = draws(model)

    assert set(values) == {0.01, 0.1}
    assert values.count(0.1) / len(values) == pytest.approx(0.25, rel=0.05)
    assert model.mean == pytest.approx(0.0325)


def test_empirical_samples_are_read_from_csv_or_json(tmp_path) -> None:
    (tmp_path / "times.csv").write_text("latency\n0.01\n0.02\n")
    (tmp_path / "times.json").write_text("[0.01, 0.02]")

    from_csv = Empirical.from_file(tmp_path / "times.csv", column="latency")
    from_json = Empirical.from_file(tmp_path / "times.json")

    assert from_csv == from_json == Empirical([0.01, 0.02])


def test_empirical_needs_a_sample_and_no_negative_one() -> None:
    with pytest.raises(ValueError, match="at least one sample"):
        Empirical([])
    with pytest.raises(ValueError, match="Empirical: every sample must be finite and 0 or more"):
        Empirical([0.1, -0.1])
