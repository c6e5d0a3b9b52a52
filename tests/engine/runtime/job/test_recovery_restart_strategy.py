"""The restart strategy decides at job level whether a failed job runs again: ``none()``
fails at once, ``fixed_delay`` restarts up to its attempts, each restart counted in metrics."""

from __future__ import annotations

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import JobStatus, OperatorError, RestartStrategy, StreamEnvironment
from lockgate.engine.testing import AwaitCheckpoint, FailOnce, InjectedFailure

RECORDS, FAIL_AT = 1_000, 700


class FailTimes:
    """A map function (a plain callable: one object shared by every attempt) that raises
    on reaching ``FAIL_AT`` the first ``times`` times, and passes records on otherwise."""

    def __init__(self, times: int) -> None:
        self.times = times
        self.failures = 0

    def __call__(self, number: int) -> int:
        if number == FAIL_AT and self.failures < self.times:
            self.failures += 1
            raise InjectedFailure(f"failure {self.failures} of {self.times}")
        return number


def flaky_job(
    flaky: FailTimes, sink: CollectSink[int], strategy: RestartStrategy
) -> StreamEnvironment:
    env = StreamEnvironment(batch_size=64)
    env.enable_checkpointing()
    env.set_restart_strategy(strategy)
    env.from_source(CollectionSource(range(RECORDS)), uid="numbers").map(
        flaky, uid="flaky"
    ).sink_to(sink, uid="out")
    return env


async def test_with_no_restart_execute_raises_the_operator_error_naming_the_operator() -> None:
    flaky = FailTimes(1)
    env = flaky_job(flaky, CollectSink(), RestartStrategy.none())

    with anyio.fail_after(10), pytest.raises(OperatorError) as failure:
        await env.execute("flaky")

    assert flaky.failures == 1, "the injected failure never fired"
    assert failure.value.uid == "flaky"
    assert isinstance(failure.value.__cause__, InjectedFailure)


async def test_fixed_delay_gives_up_after_its_attempts_and_raises_the_last_failure() -> None:
    flaky = FailTimes(3)
    env = flaky_job(flaky, CollectSink(), RestartStrategy.fixed_delay(attempts=2, delay=0.0))

    with anyio.fail_after(10):
        async with env.start("flaky") as job:
            with pytest.raises(OperatorError, match="failure 3 of 3"):
                await job.wait()

    assert flaky.failures == 3
    assert (job.status, job.metrics().attempt) == (JobStatus.FAILED, 2)


async def test_fixed_delay_restarts_a_job_that_fails_twice_to_exact_results() -> None:
    flaky, sink = FailTimes(2), CollectSink[int]()
    env = flaky_job(flaky, sink, RestartStrategy.fixed_delay(attempts=2, delay=0.0))

    with anyio.fail_after(10):
        result = await env.execute("flaky")

    assert flaky.failures == 2, "the injected failures never fired"
    assert result.metrics.attempt == 2
    assert sink.results == list(range(RECORDS))


async def test_a_restart_after_a_completed_checkpoint_resumes_from_it_to_exact_results() -> None:
    fail, sink = FailOnce(), CollectSink[int]()
    env = StreamEnvironment(batch_size=64)
    env.enable_checkpointing(0.01)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))
    numbers = [*range(500), AwaitCheckpoint(), *range(500, 700), fail, *range(700, RECORDS)]
    env.from_source(CollectionSource(numbers), uid="numbers").sink_to(sink, uid="out")

    with anyio.fail_after(10):
        result = await env.execute("resumed")

    assert fail.fired, "the injected failure never fired"
    assert result.metrics.attempt == 1
    assert result.metrics.checkpoints.completed >= 2
    assert sink.results == list(range(RECORDS))
