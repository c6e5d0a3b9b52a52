"""Checkpoint statistics in ``job.metrics().checkpoints``: when each checkpoint started, how
long it took, what it wrote, how each subtask took part, and why a failed one failed. Times
are read on a ManualClock, so durations are exact."""

from __future__ import annotations

import contextlib

import anyio
import pytest

from lockgate.engine import (
    CheckpointError,
    CheckpointFailureReason,
    JobClient,
    ManualClock,
    StreamEnvironment,
)
from lockgate.engine.checkpointing.checkpoint_status import CheckpointStatus
from tests.engine.jobs.checkpoints import (
    FailingStorage,
    Gate,
    GatedSource,
    ListeningCounter,
    ListeningSink,
    NotificationLog,
    cancel_and_wait,
)


def counting_job(clock: ManualClock, sink: ListeningSink) -> StreamEnvironment:
    """Three subtasks: the source, then two of a keyed counter chained with the sink."""
    env = StreamEnvironment(parallelism=2, clock=clock)
    env.enable_checkpointing()
    (
        env.from_source(GatedSource(1_000, gate_at=500, gate=Gate()), uid="numbers", parallelism=1)
        .key_by(lambda number: number % 4)
        .process(ListeningCounter(sink.log), uid="counter")
        .sink_to(sink, uid="sink")
    )
    return env


def source_to_sink_job(clock: ManualClock, sink: ListeningSink) -> StreamEnvironment:
    """One subtask: the source chained with the sink."""
    env = StreamEnvironment(clock=clock)
    env.enable_checkpointing()
    env.from_source(GatedSource(1_000, gate_at=500, gate=Gate()), uid="numbers").sink_to(
        sink, uid="sink"
    )
    return env


async def trigger(job: JobClient) -> None:
    # a newer checkpoint may complete first and subsume this one; the history tells
    with contextlib.suppress(CheckpointError):
        await job.trigger_checkpoint()


async def test_a_checkpoint_records_its_trigger_time_on_the_engine_clock() -> None:
    clock, sink = ManualClock(), ListeningSink(NotificationLog())

    with anyio.fail_after(10):
        async with counting_job(clock, sink).start("stats") as job:
            await sink.received.wait()
            clock.advance(5.0)
            await job.trigger_checkpoint()
            (record,) = job.metrics().checkpoints.history
            await cancel_and_wait(job)

    assert (record.checkpoint_id, record.status, record.trigger_time) == (
        1,
        CheckpointStatus.COMPLETED.value,
        5.0,
    )


async def test_a_checkpoint_lasts_from_its_trigger_to_the_last_acknowledgement() -> None:
    clock, sink = ManualClock(), ListeningSink(NotificationLog(), block_at=1)

    with anyio.fail_after(10):
        async with counting_job(clock, sink).start("stats") as job:
            await sink.received.wait()
            async with anyio.create_task_group() as group:
                group.start_soon(trigger, job)
                await sink.snapshot_started.wait()
                await anyio.wait_all_tasks_blocked()
                clock.advance(3.0)
                sink.release.set()
            (record,) = job.metrics().checkpoints.history
            await cancel_and_wait(job)

    assert record.duration == 3.0
    assert max(record.ack_delays.values()) == 3.0


async def test_a_stateful_job_writes_a_positive_state_size() -> None:
    clock, sink = ManualClock(), ListeningSink(NotificationLog())

    with anyio.fail_after(10):
        async with counting_job(clock, sink).start("stats") as job:
            await sink.received.wait()
            await job.trigger_checkpoint()
            (record,) = job.metrics().checkpoints.history
            await cancel_and_wait(job)

    assert record.state_size > 0


async def test_every_subtask_reports_its_acknowledgement_delay() -> None:
    clock, sink = ManualClock(), ListeningSink(NotificationLog())

    with anyio.fail_after(10):
        async with counting_job(clock, sink).start("stats") as job:
            await sink.received.wait()
            await job.trigger_checkpoint()
            (record,) = job.metrics().checkpoints.history
            subtasks = len(job.metrics().subtasks)
            await cancel_and_wait(job)

    assert subtasks == 3
    assert (record.acknowledged, record.total, len(record.ack_delays)) == (3, 3, 3)
    assert all(delay >= 0.0 for delay in record.ack_delays.values())


async def test_the_start_delay_is_how_long_a_busy_subtask_took_to_start_the_checkpoint() -> None:
    clock, sink = ManualClock(), ListeningSink(NotificationLog(), block_at=1)

    with anyio.fail_after(10):
        async with source_to_sink_job(clock, sink).start("stats") as job:
            await sink.received.wait()
            async with anyio.create_task_group() as group:
                group.start_soon(trigger, job)
                await sink.snapshot_started.wait()
                group.start_soon(trigger, job)  # triggered at 0.0; the subtask is busy
                await anyio.wait_all_tasks_blocked()
                clock.advance(2.0)
                sink.release.set()
            history = job.metrics().checkpoints.history
            await cancel_and_wait(job)

    start_delays = {r.checkpoint_id: r.start_delay for r in history}
    assert start_delays == {1: 0.0, 2: 2.0}


async def test_a_checkpoint_nothing_waited_for_reports_zero_alignment_and_start_delay() -> None:
    clock, sink = ManualClock(), ListeningSink(NotificationLog())

    with anyio.fail_after(10):
        async with counting_job(clock, sink).start("stats") as job:
            await sink.received.wait()
            for _ in range(2):
                await job.trigger_checkpoint()
            history = job.metrics().checkpoints.history
            await cancel_and_wait(job)

    assert [(r.alignment_duration, r.start_delay) for r in history] == [(0.0, 0.0), (0.0, 0.0)]


async def test_counts_separate_completed_failed_and_in_progress_checkpoints() -> None:
    clock, sink = ManualClock(), ListeningSink(NotificationLog())
    env = counting_job(clock, sink)
    env.set_checkpoint_storage(FailingStorage({2}, uid="numbers"))

    with anyio.fail_after(10):
        async with env.start("stats") as job:
            await sink.received.wait()
            await job.trigger_checkpoint()
            with pytest.raises(CheckpointError):
                await job.trigger_checkpoint()
            await job.trigger_checkpoint()
            statistics = job.metrics().checkpoints
            await cancel_and_wait(job)

    assert (statistics.completed, statistics.failed, statistics.in_progress) == (2, 1, 0)
    assert statistics.latest_completed.checkpoint_id == 3
    assert statistics.latest_failed.checkpoint_id == 2


async def test_a_failed_checkpoint_carries_its_failure_reason() -> None:
    clock, sink = ManualClock(), ListeningSink(NotificationLog())
    env = counting_job(clock, sink)
    env.set_checkpoint_storage(FailingStorage({1}, uid="numbers"))

    with anyio.fail_after(10):
        async with env.start("stats") as job:
            await sink.received.wait()
            with pytest.raises(CheckpointError):
                await job.trigger_checkpoint()
            (record,) = job.metrics().checkpoints.history
            await cancel_and_wait(job)

    assert (record.status, record.failure_reason) == (
        CheckpointStatus.ABORTED.value,
        CheckpointFailureReason.STORAGE_FAILED.name,
    )


async def test_a_declined_checkpoints_failure_message_names_the_subtask_and_its_error() -> None:
    clock, sink = ManualClock(), ListeningSink(NotificationLog())
    env = counting_job(clock, sink)
    env.set_checkpoint_storage(FailingStorage({1}, uid="numbers"))

    with anyio.fail_after(10):
        async with env.start("stats") as job:
            await sink.received.wait()
            with pytest.raises(CheckpointError):
                await job.trigger_checkpoint()
            (record,) = job.metrics().checkpoints.history
            await cancel_and_wait(job)

    assert "declined" in record.failure_message
    assert "injected storage failure for checkpoint 1" in record.failure_message
