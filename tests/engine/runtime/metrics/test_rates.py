"""RateWindow: per-second rates of growing counters over a rolling window, on a ManualClock."""

from __future__ import annotations

import pytest

from lockgate.engine import ManualClock
from lockgate.engine.runtime.metrics.rates import RateWindow


def read(window: RateWindow, clock: ManualClock, *values: float) -> tuple[float, ...]:
    return window.rates(clock.now(), values)


def test_a_rate_is_the_growth_since_the_start_while_the_window_is_young() -> None:
    clock = ManualClock()
    window = RateWindow(clock.now(), (0.0,), window=5.0)

    clock.advance(2.0)

    assert read(window, clock, 300.0) == (150.0,)


def test_a_rate_covers_the_window_once_it_has_run_that_long() -> None:
    clock, counted = ManualClock(), 0.0
    window = RateWindow(clock.now(), (0.0,), window=5.0, slots=5)
    for _ in range(10):  # 100 per second for 10 s, read every second
        clock.advance(1.0)
        counted += 100.0
        read(window, clock, counted)

    clock.advance(1.0)  # then 1,000 in one second

    assert read(window, clock, counted + 1_000.0) == (pytest.approx((1_000.0 + 400.0) / 5.0),)


def test_a_burst_leaves_the_rate_once_it_is_older_than_the_window() -> None:
    clock = ManualClock()
    window = RateWindow(clock.now(), (0.0,), window=5.0, slots=5)
    clock.advance(1.0)
    read(window, clock, 1_000.0)  # a burst in the first second, then nothing
    for _ in range(6):
        clock.advance(1.0)
        rates = read(window, clock, 1_000.0)

    assert rates == (0.0,)


def test_a_window_read_rarely_rates_back_to_its_previous_reading() -> None:
    clock = ManualClock()
    window = RateWindow(clock.now(), (0.0,), window=5.0)
    clock.advance(1.0)
    read(window, clock, 10.0)

    clock.advance(19.0)  # nobody looked for 19 s: the span is 19 s, not the window's 5

    assert read(window, clock, 200.0) == (10.0,)


def test_each_counter_gets_its_own_rate() -> None:
    clock = ManualClock()
    window = RateWindow(clock.now(), (0.0, 0.0, 0.0), window=5.0)

    clock.advance(4.0)

    assert read(window, clock, 40.0, 2.0, 0.0) == (10.0, 0.5, 0.0)


def test_busy_seconds_per_second_times_a_thousand_are_ms_per_second() -> None:
    clock = ManualClock()
    window = RateWindow(clock.now(), (0.0,), window=5.0)

    clock.advance(2.0)
    (busy,) = read(window, clock, 1.5)  # 1.5 s busy in 2 s

    assert busy * 1000.0 == 750.0


def test_no_time_since_the_start_gives_rates_of_zero() -> None:
    window = RateWindow(3.0, (0.0, 0.0))

    assert window.rates(3.0, (5.0, 7.0)) == (0.0, 0.0)


def test_frequent_readings_keep_memory_within_the_slots() -> None:
    clock = ManualClock()
    window = RateWindow(clock.now(), (0.0,), window=5.0, slots=10)
    for step in range(1, 1_001):  # read every 10 ms for 10 s
        clock.advance(0.01)
        read(window, clock, float(step))

    assert len(window) <= 12
    assert read(window, clock, 1_000.0) == (pytest.approx(100.0, rel=0.1),)


@pytest.mark.parametrize(("window", "slots"), [(0.0, 10), (-1.0, 10), (5.0, 0)])
def test_a_window_needs_a_positive_span_and_at_least_one_slot(window: float, slots: int) -> None:
    with pytest.raises(ValueError, match="rate window"):
        RateWindow(0.0, (0.0,), window=window, slots=slots)
