import dataclasses
import random

import pytest

from lockgate.engine.runtime.job.restart import RestartStatistics, RestartStrategy, RestartTracker


def delays(tracker: RestartTracker, times: list[float]) -> list[float | None]:
    return [tracker.on_failure(now) for now in times]


def exponential(**options) -> RestartStrategy:
    return RestartStrategy.exponential_delay(**{"jitter": 0.0, **options})


def test_no_restart_gives_up_at_the_first_failure():
    assert RestartStrategy.none().tracker().on_failure(0.0) is None


def test_fixed_delay_restarts_attempts_times_then_gives_up():
    tracker = RestartStrategy.fixed_delay(attempts=2, delay=0.5).tracker()

    assert delays(tracker, [0.0, 1.0, 2.0]) == [0.5, 0.5, None]


def test_fixed_delay_counts_failures_over_the_whole_life_of_the_job():
    tracker = RestartStrategy.fixed_delay(attempts=1, delay=0.5).tracker()

    assert delays(tracker, [0.0, 1_000_000.0]) == [0.5, None]


def test_fixed_delay_with_zero_attempts_never_restarts():
    assert RestartStrategy.fixed_delay(attempts=0, delay=1.0).tracker().on_failure(0.0) is None


def test_a_tracker_that_gave_up_stays_given_up():
    tracker = RestartStrategy.failure_rate(max_failures=1, interval=10.0, delay=0.0).tracker()

    assert delays(tracker, [0.0, 1.0, 100.0]) == [0.0, None, None]


def test_exponential_delay_doubles_up_to_the_maximum():
    tracker = exponential(initial_delay=1.0, max_delay=5.0).tracker()

    assert delays(tracker, [0.0, 10.0, 20.0, 30.0, 40.0]) == [1.0, 2.0, 4.0, 5.0, 5.0]


def test_exponential_delay_resets_after_a_healthy_run_past_the_scheduled_restart():
    tracker = exponential(reset_after=100.0).tracker()
    delays(tracker, [0.0, 10.0])  # the second restart is scheduled at 12

    assert tracker.on_failure(112.0) == 1.0


def test_exponential_delay_keeps_growing_when_the_healthy_run_was_too_short():
    tracker = exponential(reset_after=100.0).tracker()
    delays(tracker, [0.0, 10.0])

    assert tracker.on_failure(111.0) == 4.0


def test_on_success_after_a_long_healthy_run_resets_the_backoff():
    tracker = exponential(reset_after=100.0).tracker()
    delays(tracker, [0.0, 10.0])

    tracker.on_success(112.0)

    assert tracker.on_failure(112.0) == 1.0


def test_exponential_delay_gives_up_after_attempts_restarts_without_reset():
    tracker = exponential(attempts=2, reset_after=100.0).tracker()

    assert delays(tracker, [0.0, 10.0, 20.0]) == [1.0, 2.0, None]


def test_exponential_delay_counts_attempts_again_from_zero_after_a_reset():
    tracker = exponential(attempts=2, reset_after=100.0).tracker()
    delays(tracker, [0.0, 10.0])

    assert delays(tracker, [200.0, 210.0, 220.0]) == [1.0, 2.0, None]


def test_a_failure_before_the_scheduled_restart_waits_only_the_remaining_time():
    tracker = exponential(initial_delay=1.0).tracker()
    tracker.on_failure(0.0)

    assert tracker.on_failure(0.25) == 0.75


def test_a_failure_before_the_scheduled_restart_counts_no_attempt():
    tracker = exponential(initial_delay=1.0).tracker()
    delays(tracker, [0.0, 0.25])

    assert tracker.on_failure(5.0) == 2.0


def test_a_failure_right_at_the_scheduled_restart_is_a_new_attempt():
    tracker = exponential(initial_delay=1.0).tracker()
    tracker.on_failure(0.0)

    assert tracker.on_failure(1.0) == 2.0


def test_jitter_from_a_seeded_random_repeats_exactly():
    strategy_a = RestartStrategy.exponential_delay(jitter=0.5, rng=random.Random(7))
    strategy_b = RestartStrategy.exponential_delay(jitter=0.5, rng=random.Random(7))
    times = [0.0, 10.0, 30.0, 60.0]

    assert delays(strategy_a.tracker(), times) == delays(strategy_b.tracker(), times)


def test_jitter_moves_the_delay_by_at_most_its_fraction():
    tracker = RestartStrategy.exponential_delay(
        initial_delay=1.0, max_delay=1000.0, jitter=0.1, rng=random.Random(1)
    ).tracker()
    times = [100.0 * i for i in range(1, 9)]

    observed = delays(tracker, times)

    assert all(0.9 * 2**i <= d <= 1.1 * 2**i for i, d in enumerate(observed))


def test_jitter_never_leaves_the_initial_to_maximum_range():
    tracker = RestartStrategy.exponential_delay(
        initial_delay=1.0, max_delay=2.0, jitter=1.0, rng=random.Random(3)
    ).tracker()

    observed = delays(tracker, [100.0 * i for i in range(50)])

    assert all(1.0 <= d <= 2.0 for d in observed)


def test_a_huge_attempt_number_gives_the_maximum_without_overflow():
    strategy = RestartStrategy.exponential_delay()

    assert strategy.delay_for(100_000) == 60.0


def test_failure_rate_restarts_up_to_max_failures_within_the_interval():
    tracker = RestartStrategy.failure_rate(max_failures=2, interval=10.0, delay=0.5).tracker()

    assert delays(tracker, [0.0, 1.0, 2.0]) == [0.5, 0.5, None]


def test_failure_rate_forgets_failures_older_than_the_interval():
    tracker = RestartStrategy.failure_rate(max_failures=2, interval=10.0, delay=0.5).tracker()

    assert delays(tracker, [0.0, 1.0, 10.5, 11.5]) == [0.5, 0.5, 0.5, 0.5]


def test_failure_rate_counts_a_failure_exactly_one_interval_old():
    tracker = RestartStrategy.failure_rate(max_failures=1, interval=10.0, delay=0.5).tracker()

    assert delays(tracker, [0.0, 10.0]) == [0.5, None]


def test_statistics_count_failures_and_restarts():
    tracker = RestartStrategy.fixed_delay(attempts=1, delay=0.0).tracker()
    delays(tracker, [0.0, 1.0])

    assert tracker.statistics() == RestartStatistics(failures=2, restarts=1, gave_up=True)


@pytest.mark.parametrize(
    ("strategy", "text"),
    [
        (RestartStrategy.none(), "RestartStrategy.none()"),
        (
            RestartStrategy.fixed_delay(attempts=3, delay=0.1),
            "RestartStrategy.fixed_delay(attempts=3, delay=0.1)",
        ),
        (
            RestartStrategy.failure_rate(max_failures=3, interval=60.0, delay=1.0),
            "RestartStrategy.failure_rate(max_failures=3, interval=60.0, delay=1.0)",
        ),
        (
            RestartStrategy.exponential_delay(),
            "RestartStrategy.exponential_delay(initial_delay=1.0, max_delay=60.0, "
            "multiplier=2.0, reset_after=3600.0, jitter=0.1, attempts=None)",
        ),
    ],
)
def test_a_strategy_reprs_as_the_call_that_builds_it(strategy, text):
    assert repr(strategy) == text


def test_strategies_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        RestartStrategy.fixed_delay(attempts=3, delay=0.1).delay = 1.0


def test_strategies_with_the_same_options_are_equal_whatever_their_random_source():
    assert RestartStrategy.exponential_delay(rng=random.Random(1)) == (
        RestartStrategy.exponential_delay(rng=random.Random(2))
    )


def test_each_tracker_starts_afresh():
    strategy = RestartStrategy.fixed_delay(attempts=1, delay=0.0)
    strategy.tracker().on_failure(0.0)

    assert strategy.tracker().on_failure(0.0) == 0.0


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: RestartStrategy.fixed_delay(attempts=-1, delay=0.0), "attempts"),
        (lambda: RestartStrategy.fixed_delay(attempts=1, delay=-1.0), "delay"),
        (lambda: RestartStrategy.exponential_delay(initial_delay=0.0), "initial_delay"),
        (lambda: RestartStrategy.exponential_delay(max_delay=0.5), "max_delay"),
        (lambda: RestartStrategy.exponential_delay(multiplier=1.0), "multiplier"),
        (lambda: RestartStrategy.exponential_delay(reset_after=0.0), "reset_after"),
        (lambda: RestartStrategy.exponential_delay(jitter=1.5), "jitter"),
        (lambda: RestartStrategy.exponential_delay(attempts=0), "attempts"),
        (lambda: RestartStrategy.failure_rate(max_failures=0, interval=1.0, delay=0.0), "max_"),
        (lambda: RestartStrategy.failure_rate(max_failures=1, interval=0.0, delay=0.0), "interval"),
        (lambda: RestartStrategy.failure_rate(max_failures=1, interval=1.0, delay=-1), "delay"),
    ],
)
def test_an_invalid_option_is_refused_naming_it(build, message):
    with pytest.raises(ValueError, match=message):
        build()
