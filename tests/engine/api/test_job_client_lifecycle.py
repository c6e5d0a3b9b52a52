"""A job's lifecycle is visible from its first failure on: ``status`` (RESTARTING while it
waits to restart), ``failures`` (every failed attempt), ``events()`` (typed lifecycle events,
never slowing the job) and a log record for each step."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TypeVar

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    CheckpointCompleted,
    CheckpointFailed,
    CheckpointFailureReason,
    EventsDropped,
    EventSubscription,
    JobCanceled,
    JobEvent,
    JobFailed,
    JobFinished,
    JobRestarting,
    JobStarted,
    JobStatus,
    ManualClock,
    OperatorError,
    RestartStrategy,
    RestoredFromCheckpoint,
    StreamEnvironment,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce, InjectedFailure
from tests.engine.jobs.basic import EndlessSource
from tests.engine.jobs.checkpoints import FailingStorage, cancel_and_wait


class Broken(Exception):
    """What the always failing map raises."""


def always_fails(number: int) -> int:
    raise Broken(f"cannot map {number}")


def failing_job(clock: ManualClock | None = None) -> StreamEnvironment:
    """A map that raises on every record, checkpointing on (so Flink's default restart
    strategy: exponential delay, no bound on attempts)."""
    env = StreamEnvironment(clock=clock)
    env.enable_checkpointing(1.0)
    env.from_source(CollectionSource(range(10)), uid="numbers").map(
        always_fails, uid="broken"
    ).sink_to(CollectSink(), uid="out")
    return env


E = TypeVar("E", bound=JobEvent)


async def next_of(events: EventSubscription, kind: type[E]) -> E:
    async for event in events:
        if isinstance(event, kind):
            return event
    raise AssertionError(f"the job's events ended without a {kind.__name__}")


async def test_a_failing_map_is_restarting_with_its_exception_in_failures_and_a_log_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()  # never advanced: the first restart delay never passes
    caplog.set_level(logging.INFO, logger="lockgate")

    with anyio.fail_after(10):
        async with failing_job(clock).start("broken") as job:
            restarting = await next_of(job.events(), JobRestarting)
            status, failures = job.status, job.failures
            job.cancel()

    (failure,) = failures
    assert status is JobStatus.RESTARTING
    assert failure.attempt == 0
    assert isinstance(failure.exception, OperatorError)
    assert failure.exception.uid == "broken"
    assert isinstance(failure.exception.__cause__, Broken)
    assert (restarting.attempt, restarting.cause) == (0, failure.exception)
    assert restarting.delay > 0
    (record,) = [r for r in caplog.records if getattr(r, "event", None) == "JobRestarting"]
    assert record.name == "lockgate.engine.runtime.job.job_events"
    assert record.levelno == logging.WARNING
    assert (record.job, record.attempt, record.uid, record.subtask) == ("broken", 0, "broken", 0)
    assert record.exc_info is not None and record.exc_info[1] is failure.exception


async def test_failures_lists_every_failed_attempt_in_order_with_its_wall_clock_time() -> None:
    env = failing_job()
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    before = time.time()

    with anyio.fail_after(10):
        async with env.start("broken") as job:
            with pytest.raises(OperatorError) as raised:
                await job.wait()

    after = time.time()
    assert [f.attempt for f in job.failures] == [0, 1, 2]
    assert all(isinstance(f.exception.__cause__, Broken) for f in job.failures)
    assert job.failures[-1].exception is raised.value
    times = [f.time for f in job.failures]
    assert before <= times[0] <= times[1] <= times[2] <= after
    assert job.status is JobStatus.FAILED


async def test_a_job_on_a_manual_clock_stamps_its_failures_and_events_with_the_clocks_time() -> (
    None
):
    env = failing_job(ManualClock(start=1_000.0))
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))

    with anyio.fail_after(10):
        async with env.start("broken") as job:
            events = job.events()
            with pytest.raises(OperatorError):
                await job.wait()

    assert [f.time for f in job.failures] == [1_000.0, 1_000.0]
    assert {event.time async for event in events} == {1_000.0}


async def test_a_job_that_gives_up_ends_its_events_with_job_failed() -> None:
    env = failing_job()
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))

    with anyio.fail_after(10):
        async with env.start("broken") as job:
            events = job.events()
            with pytest.raises(OperatorError):
                await job.wait()
            seen = [event async for event in events if not isinstance(event, CheckpointFailed)]

    assert [type(event) for event in seen] == [
        JobStarted,
        JobRestarting,
        JobStarted,
        JobFailed,
    ]
    assert [event.attempt for event in seen] == [0, 0, 1, 1]
    assert seen[-1].failure is job.failures[-1].exception


async def test_a_restart_reports_the_checkpoint_it_restores_and_where_it_is(
    tmp_path: Path,
) -> None:
    fail, sink = FailOnce(), CollectSink[int]()
    env = StreamEnvironment(batch_size=64)
    env.enable_checkpointing(0.01)
    env.set_checkpoint_storage(tmp_path.as_uri())
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))
    numbers = [*range(500), AwaitCheckpoint(), *range(500, 700), fail, *range(700, 1000)]
    env.from_source(CollectionSource(numbers), uid="numbers").sink_to(sink, uid="out")

    with anyio.fail_after(10):
        async with env.start("resumed") as job:
            events = job.events()
            await job.wait()
            seen = [event async for event in events]

    assert fail.fired, "the injected failure never fired"
    assert sink.results == list(range(1000))
    restart = next(i for i, e in enumerate(seen) if isinstance(e, JobRestarting))
    completed = [e for e in seen[:restart] if isinstance(e, CheckpointCompleted)]
    started, restored = seen[restart + 1 : restart + 3]
    assert isinstance(seen[restart].cause.__cause__, InjectedFailure)
    assert restored == RestoredFromCheckpoint(
        "resumed", restored.time, 1, completed[-1].checkpoint_id, completed[-1].location, False
    )
    assert Path(completed[-1].location).is_relative_to(tmp_path)
    assert started == JobStarted("resumed", started.time, 1)
    assert isinstance(seen[-1], JobFinished)


async def test_a_checkpoint_a_subtask_declines_is_a_checkpoint_failed_event_with_its_reason() -> (
    None
):
    env = StreamEnvironment(parallelism=2, batch_size=64)
    env.enable_checkpointing()
    env.set_restart_strategy(RestartStrategy.none())
    storage = FailingStorage({1}, uid="numbers", subtask_index=0)
    env.set_checkpoint_storage(storage)
    env.from_source(EndlessSource(), uid="numbers").sink_to(CollectSink(), uid="out")

    with anyio.fail_after(10):
        async with env.start("declined") as job:
            events = job.events()
            with pytest.raises(Exception, match="checkpoint 1 failed"):
                await job.trigger_checkpoint()
            failed = await next_of(events, CheckpointFailed)
            await cancel_and_wait(job)

    assert storage.failed == [1], "the injected storage failure never fired"
    assert failed.checkpoint_id == 1
    assert failed.reason is CheckpointFailureReason.STORAGE_FAILED
    assert "injected storage failure" in failed.detail
    assert failed.level == logging.WARNING


async def test_cancel_while_restarting_ends_the_job_at_once_without_waiting_out_the_delay() -> None:
    clock = ManualClock()  # never advanced: only the cancellation can end the wait

    with anyio.fail_after(10):
        async with failing_job(clock).start("broken") as job:
            events = job.events()
            await next_of(events, JobRestarting)
            job.cancel()
            finishing = job.status
            result = await job.wait()
            last = [event async for event in events]

    assert finishing is JobStatus.FINISHING
    assert (result.status, job.status) == (JobStatus.CANCELED, JobStatus.CANCELED)
    assert [type(event) for event in last] == [JobCanceled]
    assert len(job.failures) == 1


async def test_a_subscriber_that_does_not_read_never_slows_the_job_and_learns_what_it_lost() -> (
    None
):
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(100)), uid="numbers").sink_to(CollectSink(), uid="out")

    with anyio.fail_after(10):
        async with env.start("finished") as job:
            events = job.events(capacity=1)
            await job.wait()  # nobody reads the events meanwhile
            seen = [event async for event in events]

    first, dropped, last = seen
    assert isinstance(first, JobStarted)
    assert isinstance(dropped, EventsDropped) and dropped.count >= 1
    assert isinstance(last, JobFinished)
    assert job.status is JobStatus.FINISHED


async def test_a_subscription_taken_after_the_job_ended_yields_nothing() -> None:
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(10)), uid="numbers").sink_to(CollectSink(), uid="out")

    async with env.start("ended") as job:
        await job.wait()

    assert [event async for event in job.events()] == []


async def test_a_savepoint_and_a_start_from_it_are_reported_as_savepoint_events(
    tmp_path: Path,
) -> None:
    def endless_job() -> StreamEnvironment:
        env = StreamEnvironment()
        env.enable_checkpointing()
        env.from_source(EndlessSource(), uid="numbers").sink_to(CollectSink(), uid="out")
        return env

    with anyio.fail_after(10):
        async with endless_job().start("versions") as job:
            events = job.events()
            folder = await job.stop_with_savepoint(str(tmp_path))
            taken = await next_of(events, CheckpointCompleted)
        async with endless_job().start("versions", restore_from=folder) as job:
            events = job.events()
            restored = await next_of(events, RestoredFromCheckpoint)
            await cancel_and_wait(job)

    assert taken.is_savepoint and Path(taken.location).parent == Path(folder)
    assert (restored.attempt, restored.checkpoint_id) == (0, taken.checkpoint_id)
    assert restored.is_savepoint and Path(restored.location) == Path(folder)
