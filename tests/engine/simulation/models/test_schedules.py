"""RateSchedule and OnOff: arrivals whose rate steps with time, and bursts."""

from __future__ import annotations

import itertools
import random

import pytest

from lockgate.engine.simulation import OnOff, RateSchedule


def first(process: RateSchedule | OnOff, count: int, seed: int = 1) -> list[float]:
    return list(itertools.islice(process.times(random.Random(seed)), count))


def until(process: RateSchedule | OnOff, end: float, seed: int = 1) -> list[float]:
    return list(itertools.takewhile(lambda t: t < end, process.times(random.Random(seed))))


def test_evenly_spaced_arrivals_follow_each_steps_rate() -> None:
    schedule = RateSchedule([(0.0, 10.0), (1.0, 2.0)], poisson=False)

    times = [round(t, 9) for t in first(schedule, 12)]

    assert times == [round(0.1 * k, 9) for k in range(1, 11)] + [1.5, 2.0]


def test_poisson_arrivals_come_at_each_steps_rate_on_average() -> None:
    schedule = RateSchedule([(0.0, 100.0), (100.0, 400.0)])

    times = until(schedule, 200.0)

    assert len([t for t in times if t < 100.0]) == pytest.approx(10_000, rel=0.03)
    assert len([t for t in times if t >= 100.0]) == pytest.approx(40_000, rel=0.03)


def test_a_pause_has_no_arrivals_and_a_last_rate_of_zero_ends_them() -> None:
    schedule = RateSchedule([(0.0, 50.0), (1.0, 0.0), (2.0, 50.0), (3.0, 0.0)])

    times = list(schedule.times(random.Random(1)))

    assert times and all(t < 1.0 or 2.0 <= t < 3.0 for t in times)
    assert schedule.rate == 0.0


def test_a_schedule_with_a_period_repeats_and_its_rate_is_the_periods_mean() -> None:
    schedule = RateSchedule([(0.0, 10.0), (1.0, 0.0)], period=4.0, poisson=False)

    times = [round(t, 9) for t in until(schedule, 8.5)]

    assert times == [round(c + 0.1 * k, 9) for c in (0.0, 4.0, 8.0) for k in range(1, 11)][:25]
    assert schedule.rate == pytest.approx(2.5)
    assert schedule.rate_at(5.5) == 0.0 and schedule.rate_at(4.5) == 10.0


def test_on_off_bursts_arrive_only_while_on_at_the_peak_rate() -> None:
    bursts = OnOff(1_000.0, on=1.0, off=4.0)

    times = until(bursts, 100.0)

    assert all(t % 5.0 < 1.0 for t in times)
    assert len(times) == pytest.approx(20_000, rel=0.03)
    assert bursts.rate == pytest.approx(200.0)


def test_a_share_of_a_schedule_has_its_part_of_each_rate() -> None:
    share = RateSchedule([(0.0, 90.0), (5.0, 30.0)], period=10.0).share(3, 1)

    assert share.steps == ((0.0, 30.0), (5.0, 10.0))
    assert OnOff(90.0, 1.0, 2.0).share(3) == OnOff(30.0, 1.0, 2.0)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: RateSchedule([]), "at least one"),
        (lambda: RateSchedule([(1.0, 5.0), (1.0, 6.0)]), "increasing; got \\[1.0, 1.0\\]"),
        (lambda: RateSchedule([(0.0, -5.0)]), "the rate from 0 s must be finite and 0 or more"),
        (lambda: RateSchedule([(0.0, 1.0), (5.0, 2.0)], period=5.0), "after the last step"),
        (lambda: OnOff(10.0, on=0.0, off=1.0), "OnOff: on must be finite and more than 0"),
    ],
)
def test_a_schedule_that_cannot_be_is_refused_saying_why(make, message) -> None:
    with pytest.raises(ValueError, match=message):
        make()
