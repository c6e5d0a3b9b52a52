"""async_map's failure policies, timeouts, retries with backoff, rate limit and metrics,
driven by a ManualClock where time matters."""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import AsyncRetry, ManualClock, OperatorError, StreamEnvironment
from tests.engine.jobs.async_io import Changes, HeldCalls, wait_until


class Flaky:
    """Fails (raises, or hangs with ``hang=True``) the first ``failures`` attempts per record;
    logs each attempt's start on the clock."""

    def __init__(self, clock: Any, failures: int, *, hang: bool = False) -> None:
        self.clock = clock
        self.failures = failures
        self.hang = hang
        self.attempts: dict[Any, list[float]] = defaultdict(list)

    def __deepcopy__(self, memo: dict[int, Any]) -> Flaky:
        return self

    async def __call__(self, record: Any) -> Any:
        self.attempts[record].append(self.clock.now())
        if len(self.attempts[record]) > self.failures:
            return record
        if self.hang:
            await anyio.Event().wait()
        raise ConnectionError(f"service unavailable for {record}")

    def count(self) -> int:
        return sum(len(starts) for starts in self.attempts.values())


def job(fn: Any, records: int, clock: Any = None, **options: Any) -> tuple[StreamEnvironment, Any]:
    env = StreamEnvironment(clock=clock)
    sink = CollectSink()
    (
        env.from_source(CollectionSource(range(records)), uid="numbers")
        .async_map(fn, uid="calls", **options)
        .sink_to(sink, uid="out")
    )
    return env, sink


async def test_by_default_a_failed_call_fails_the_job_naming_the_operator_and_subtask() -> None:
    env, _ = job(Flaky(ManualClock(), failures=1), 3)

    with pytest.raises(OperatorError, match=r"operator 'calls' \(subtask 1/1\)") as failure:
        await env.execute("fails")

    assert isinstance(failure.value.__cause__, ConnectionError)


async def test_a_call_past_its_timeout_fails_the_job_with_a_timeout_error() -> None:
    clock = ManualClock()
    calls = HeldCalls(Changes())
    env, _ = job(calls, 3, clock, timeout=5.0)

    async with env.start("timeout") as job_client:
        await calls.wait_started(3)
        clock.advance(5.0)
        with pytest.raises(OperatorError, match="'calls'") as failure:
            await job_client.wait()

    assert isinstance(failure.value.__cause__, TimeoutError)
    assert "took longer than timeout=5.0 s (attempt 1 of 1)" in str(failure.value.__cause__)


async def test_timed_out_calls_are_retried_after_exponential_backoff_on_the_clock() -> None:
    clock = ManualClock()
    flaky = Flaky(clock, failures=2, hang=True)
    retry = AsyncRetry(attempts=3, initial_backoff=1.0, multiplier=2.0, jitter=0.0)
    env, sink = job(flaky, 4, clock, timeout=5.0, retry=retry)

    async with env.start("retry-timeouts") as job_client:
        for attempt, backoff in ((1, 1.0), (2, 2.0)):
            await wait_until(lambda: flaky.count() == 4 * attempt)  # noqa: B023 - awaited here
            clock.advance(5.0)  # every attempt in flight times out
            await wait_until(lambda: clock.sleepers == 4)  # four backoffs
            clock.advance(backoff)
        result = await job_client.wait()

    assert sink.results == [0, 1, 2, 3]
    assert {tuple(starts) for starts in flaky.attempts.values()} == {(0.0, 6.0, 13.0)}
    (metrics,) = result.metrics.async_io("calls")
    assert (metrics.calls, metrics.retries, metrics.timeouts, metrics.failures) == (12, 8, 8, 0)


async def test_a_record_whose_attempts_are_spent_fails_the_job_with_the_last_error() -> None:
    flaky = Flaky(ManualClock(), failures=5)
    env, _ = job(flaky, 1, retry=AsyncRetry(attempts=3, initial_backoff=0.0))

    with pytest.raises(OperatorError) as failure:
        await env.execute("spent")

    assert isinstance(failure.value.__cause__, ConnectionError)
    assert len(flaky.attempts[0]) == 3


async def test_on_failure_retry_uses_the_default_retry_policy() -> None:
    clock = ManualClock()
    flaky = Flaky(clock, failures=1)
    env, sink = job(flaky, 5, clock, on_failure="retry")

    async with env.start("default-retry") as job_client:
        await wait_until(lambda: clock.sleepers == 5)
        clock.advance(AsyncRetry().initial_backoff * (1 + AsyncRetry().jitter))
        result = await job_client.wait()

    assert sink.results == [0, 1, 2, 3, 4]
    assert result.metrics.async_io("calls")[0].retries == 5


async def test_the_backoff_jitter_comes_from_the_seeded_generator_of_the_subtask() -> None:
    clock = ManualClock()
    retry = AsyncRetry(attempts=2, initial_backoff=1.0, jitter=0.5, seed=42)
    expected = retry.backoff(1, random.Random(42 + 0).random())
    env, sink = job(Flaky(clock, failures=1), 1, clock, retry=retry)

    async with env.start("jitter") as job_client:
        await wait_until(lambda: clock.sleepers == 1)
        clock.advance(expected - 1e-9)
        still_waiting = clock.sleepers
        clock.advance(2e-9)
        await job_client.wait()

    assert expected != 1.0
    assert (still_waiting, sink.results) == (1, [0])


async def test_a_fallback_emits_records_in_place_of_a_failed_one_in_input_order() -> None:
    async def odd_fails(record: int) -> int:
        if record % 2:
            raise ValueError("odd")
        return record

    def fallback(record: int, error: BaseException) -> list[Any]:
        return [("failed", record, type(error).__name__)]

    env, sink = job(odd_fails, 6, on_failure=fallback)

    result = await env.execute("fallback")

    failed = [("failed", r, "ValueError") for r in (1, 3, 5)]
    assert sink.results == [0, failed[0], 2, failed[1], 4, failed[2]]
    assert result.metrics.async_io("calls")[0].failures == 3


async def test_a_fallback_comes_after_the_retries_and_may_emit_nothing() -> None:
    flaky = Flaky(ManualClock(), failures=9)
    retry = AsyncRetry(attempts=2, initial_backoff=0.0)
    env, sink = job(flaky, 3, retry=retry, on_failure=lambda record, error: [])

    await env.execute("drop")

    assert sink.results == []
    assert [len(flaky.attempts[r]) for r in range(3)] == [2, 2, 2]


async def test_a_retry_predicate_sends_permanent_errors_to_the_fallback_without_retrying() -> None:
    calls: dict[int, int] = defaultdict(int)

    async def lookup(record: int) -> int:
        calls[record] += 1
        if record % 2:
            raise LookupError(f"no user {record}")
        if calls[record] == 1:
            raise ConnectionError("try again")
        return record

    retry = AsyncRetry(
        attempts=3, initial_backoff=0.0, retry_on=lambda e: not isinstance(e, LookupError)
    )
    env, sink = job(lookup, 4, retry=retry, on_failure=lambda record, error: [-record])

    result = await env.execute("predicate")

    assert sink.results == [0, -1, 2, -3]
    assert dict(calls) == {0: 2, 1: 1, 2: 2, 3: 1}
    assert result.metrics.async_io("calls")[0].retries == 2


async def test_the_rate_limit_spaces_call_starts_on_the_clock_after_a_burst() -> None:
    clock = ManualClock()
    starts: list[float] = []

    async def record_start(record: int) -> int:
        starts.append(clock.now())
        return record

    env, sink = job(record_start, 10, clock, rate_limit=4.0)

    async with env.start("rate") as job_client:
        await wait_until(lambda: len(starts) == 4 and clock.sleepers == 6)
        for started in range(5, 11):
            clock.advance(0.25)
            await wait_until(lambda: len(starts) == started)  # noqa: B023 - awaited at once
        await job_client.wait()

    assert starts == [0.0] * 4 + [0.25, 0.5, 0.75, 1.0, 1.25, 1.5]
    assert sink.results == list(range(10))


async def test_metrics_report_calls_in_flight_and_latency_percentiles_on_the_clock() -> None:
    clock = ManualClock()

    async def slow(record: int) -> int:
        await clock.sleep(0.5 if record % 2 else 1.0)
        return record

    env, _ = job(slow, 10, clock, capacity=20)

    async with env.start("metrics") as job_client:
        await wait_until(lambda: clock.sleepers == 10)
        (during,) = job_client.metrics().async_io("calls")
        clock.advance(0.5)
        await wait_until(lambda: job_client.metrics().async_io("calls")[0].completed == 5)
        clock.advance(0.5)
        result = await job_client.wait()

    (after,) = result.metrics.async_io("calls")
    assert (during.in_flight, during.queued, during.calls, during.latency_p50) == (10, 10, 10, None)
    assert (after.in_flight, after.queued, after.completed) == (0, 0, 10)
    assert (after.latency_p50, after.latency_p95, after.latency_p99) == pytest.approx(
        (0.5, 1.0, 1.0), rel=0.01
    )
    assert (after.latency.count, after.latency.sum) == (10, pytest.approx(7.5))
