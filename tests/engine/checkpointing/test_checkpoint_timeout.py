"""A checkpoint that cannot complete is aborted with TIMEOUT once the engine clock passes its
timeout, never before; a ManualClock moves time, so nothing waits on the wall clock."""

from __future__ import annotations

import anyio

from lockgate.engine import (
    CheckpointError,
    CheckpointFailureReason,
    JobClient,
    ManualClock,
    StreamEnvironment,
)
from tests.engine.jobs.checkpoints import (
    Gate,
    GatedSource,
    ListeningSink,
    NotificationLog,
    cancel_and_wait,
)

TIMEOUT = 10.0


def stuck_job(clock: ManualClock, sink: ListeningSink) -> StreamEnvironment:
    """One subtask, source -> sink; the sink's snapshot for checkpoint 1 blocks."""
    env = StreamEnvironment(clock=clock)
    env.enable_checkpointing(timeout=TIMEOUT)
    env.from_source(GatedSource(100, gate_at=50, gate=Gate()), uid="numbers").sink_to(
        sink, uid="sink"
    )
    return env


async def trigger(job: JobClient, failures: list[CheckpointError]) -> None:
    try:
        await job.trigger_checkpoint()
    except CheckpointError as failure:
        failures.append(failure)


async def test_a_checkpoint_is_aborted_with_timeout_once_the_clock_passes_its_timeout() -> None:
    clock, log = ManualClock(), NotificationLog()
    sink = ListeningSink(log, block_at=1)
    failures: list[CheckpointError] = []

    with anyio.fail_after(10):
        async with stuck_job(clock, sink).start("stuck") as job:
            await sink.received.wait()
            async with anyio.create_task_group() as group:
                group.start_soon(trigger, job, failures)
                await sink.snapshot_started.wait()
                await anyio.wait_all_tasks_blocked()
                clock.advance(TIMEOUT)
            sink.release.set()
            await cancel_and_wait(job)

    assert [(f.checkpoint_id, f.reason) for f in failures] == [(1, CheckpointFailureReason.TIMEOUT)]


async def test_a_timed_out_checkpoint_is_notified_as_aborted() -> None:
    clock, log = ManualClock(), NotificationLog()
    sink = ListeningSink(log, block_at=1)

    with anyio.fail_after(10):
        async with stuck_job(clock, sink).start("stuck") as job:
            await sink.received.wait()
            async with anyio.create_task_group() as group:
                group.start_soon(trigger, job, [])
                await sink.snapshot_started.wait()
                await anyio.wait_all_tasks_blocked()
                clock.advance(TIMEOUT)
            sink.release.set()
            await log.wait_count("aborted", 1, 1)
            history = job.metrics().checkpoints.history
            await cancel_and_wait(job)

    assert log.who("aborted", 1) == ["sink[0]"]
    assert [(r.checkpoint_id, r.failure_reason) for r in history] == [
        (1, CheckpointFailureReason.TIMEOUT.name)
    ]


async def test_a_checkpoint_is_not_aborted_before_its_timeout() -> None:
    clock, log = ManualClock(), NotificationLog()
    sink = ListeningSink(log, block_at=1)

    with anyio.fail_after(10):
        async with stuck_job(clock, sink).start("stuck") as job:
            await sink.received.wait()
            async with anyio.create_task_group() as group:
                group.start_soon(trigger, job, [])
                await sink.snapshot_started.wait()
                await anyio.wait_all_tasks_blocked()
                clock.advance(TIMEOUT - 0.5)
                await anyio.wait_all_tasks_blocked()
                statistics = job.metrics().checkpoints
                sink.release.set()
            await log.wait_count("complete", 1, 1)
            await cancel_and_wait(job)

    assert (statistics.in_progress, statistics.failed) == (1, 0)
    assert log.who("complete", 1) == ["sink[0]"]


async def test_the_next_checkpoint_completes_after_a_timed_out_one() -> None:
    clock, log = ManualClock(), NotificationLog()
    sink = ListeningSink(log, block_at=1)

    with anyio.fail_after(10):
        async with stuck_job(clock, sink).start("stuck") as job:
            await sink.received.wait()
            async with anyio.create_task_group() as group:
                group.start_soon(trigger, job, [])
                await sink.snapshot_started.wait()
                await anyio.wait_all_tasks_blocked()
                clock.advance(TIMEOUT)
            sink.release.set()
            completed = await job.trigger_checkpoint()
            await cancel_and_wait(job)

    assert completed.checkpoint_id == 2
