"""The parts of async_map: retry schedule, token bucket, call deadlines."""

from __future__ import annotations

import anyio
import pytest

from lockgate.engine import AsyncRetry, ManualClock
from lockgate.engine.runtime.async_io.call_deadlines import CallDeadlines
from lockgate.engine.runtime.async_io.token_bucket import TokenBucket


def test_backoff_grows_by_the_multiplier_up_to_the_maximum() -> None:
    retry = AsyncRetry(initial_backoff=0.1, multiplier=3.0, max_backoff=1.0, jitter=0.0)

    delays = [retry.backoff(n, uniform=0.9) for n in range(1, 5)]

    assert delays == pytest.approx([0.1, 0.3, 0.9, 1.0])


def test_jitter_scales_the_backoff_within_plus_or_minus_its_fraction() -> None:
    retry = AsyncRetry(initial_backoff=1.0, jitter=0.25)

    assert retry.backoff(1, uniform=0.0) == pytest.approx(0.75)
    assert retry.backoff(1, uniform=0.5) == pytest.approx(1.0)
    assert retry.backoff(1, uniform=0.999999) == pytest.approx(1.25, abs=1e-5)


def test_a_valid_retry_policy_has_no_problems_and_an_invalid_one_names_each() -> None:
    bad = AsyncRetry(attempts=0, multiplier=0.5, jitter=2.0)

    assert AsyncRetry().problems() == []
    assert [p.split()[0] for p in bad.problems()] == ["attempts", "multiplier", "jitter"]


def test_a_token_bucket_lets_a_burst_through_then_spaces_reservations_by_the_rate() -> None:
    bucket = TokenBucket(4.0, burst=2.0, now=0.0)

    waits = [bucket.reserve(0.0) for _ in range(5)]

    assert waits == [0.0, 0.0, 0.25, 0.5, 0.75]


def test_a_token_bucket_refills_with_time_but_never_beyond_its_burst() -> None:
    bucket = TokenBucket(4.0, burst=2.0, now=0.0)
    bucket.reserve(0.0)
    bucket.reserve(0.0)

    assert bucket.reserve(0.25) == 0.0
    assert [bucket.reserve(100.0) for _ in range(3)] == [0.0, 0.0, 0.25]


def test_a_token_bucket_needs_a_positive_rate() -> None:
    with pytest.raises(ValueError, match="rate > 0"):
        TokenBucket(0.0, burst=1.0, now=0.0)


async def test_call_deadlines_drop_finished_calls_so_they_hold_about_the_calls_in_flight() -> None:
    deadlines = CallDeadlines(ManualClock(), timeout=5.0)

    for _ in range(1_000):
        deadlines.start().done = True

    assert len(deadlines) == 1


async def test_call_deadlines_cancel_only_the_calls_whose_deadline_passed() -> None:
    clock = ManualClock()
    deadlines = CallDeadlines(clock, timeout=5.0)
    first = deadlines.start()
    clock.advance(1.0)
    second = deadlines.start()

    async with anyio.create_task_group() as group:
        group.start_soon(deadlines.run)
        clock.advance(4.0)
        with first.scope, second.scope:
            await anyio.sleep_forever()
        group.cancel_scope.cancel()

    assert (first.expired, second.expired) == (True, False)


def test_a_retry_predicate_stops_retrying_the_errors_it_rejects() -> None:
    retry = AsyncRetry(attempts=3, retry_on=lambda error: not isinstance(error, LookupError))

    assert retry.retries(TimeoutError(), attempt=1)
    assert not retry.retries(LookupError("no such user"), attempt=1)
    assert not retry.retries(TimeoutError(), attempt=3)


def test_a_retry_predicate_that_is_not_callable_is_a_problem() -> None:
    problems = AsyncRetry(retry_on="LookupError").problems()  # type: ignore[arg-type]

    assert problems == ["retry_on must be a callable (error) -> bool, or None; got 'LookupError'"]
