"""A checkpoint one subtask declines is aborted: every participant hears it once, the job
tolerates up to ``tolerable_failures`` failed checkpoints in a row, and fails beyond."""

from __future__ import annotations

from collections.abc import Container

import anyio
import pytest

from lockgate.engine import (
    CheckpointError,
    CheckpointFailureReason,
    JobStatus,
    RestartStrategy,
    StreamEnvironment,
)
from lockgate.engine.checkpointing.checkpoint_status import CheckpointStatus
from lockgate.engine.testing import RecordingTwoPhaseCommitSink
from tests.engine.jobs.basic import EndlessSource
from tests.engine.jobs.checkpoints import (
    FailingStorage,
    Gate,
    GatedSource,
    ListeningCounter,
    ListeningSink,
    NotificationLog,
    cancel_and_wait,
)

STORAGE_FAILED = CheckpointFailureReason.STORAGE_FAILED
EVERY_PARTICIPANT = ["counter[0]", "counter[1]", "sink[0]", "sink[1]"]


def endless_job(
    log: NotificationLog, failing: Container[int], *, tolerable_failures: int = 3
) -> tuple[StreamEnvironment, FailingStorage, ListeningSink]:
    """Two source subtasks -> key_by -> two counter+sink subtasks; the first source subtask's
    state write fails for the checkpoints in ``failing``."""
    env = StreamEnvironment(parallelism=2, batch_size=64, channel_capacity=256)
    env.enable_checkpointing(tolerable_failures=tolerable_failures)
    env.set_restart_strategy(RestartStrategy.none())
    storage = FailingStorage(failing, uid="numbers", subtask_index=0)
    env.set_checkpoint_storage(storage)
    sink = ListeningSink(log)
    (
        env.from_source(EndlessSource(), uid="numbers")
        .key_by(lambda number: number % 8)
        .process(ListeningCounter(log), uid="counter")
        .sink_to(sink, uid="sink")
    )
    return env, storage, sink


async def test_a_checkpoint_a_subtask_cannot_write_raises_checkpoint_error() -> None:
    env, storage, sink = endless_job(NotificationLog(), {1})

    with anyio.fail_after(10):
        async with env.start("abort") as job:
            await sink.received.wait()
            with pytest.raises(CheckpointError) as failure:
                await job.trigger_checkpoint()
            await cancel_and_wait(job)

    assert storage.failed == [1], "the injected storage failure never fired"
    assert (failure.value.checkpoint_id, failure.value.reason) == (1, STORAGE_FAILED)


async def test_every_operator_subtask_hears_once_that_a_declined_checkpoint_was_aborted() -> None:
    log = NotificationLog()
    env, storage, sink = endless_job(log, {1})

    with anyio.fail_after(10):
        async with env.start("abort") as job:
            await sink.received.wait()
            with pytest.raises(CheckpointError):
                await job.trigger_checkpoint()
            await job.trigger_checkpoint()
            # control messages arrive in order: once checkpoint 2's completion reached every
            # participant, so did checkpoint 1's abort
            await log.wait_count("complete", 2, len(EVERY_PARTICIPANT))
            await cancel_and_wait(job)

    assert storage.failed == [1], "the injected storage failure never fired"
    assert log.who("aborted", 1) == EVERY_PARTICIPANT
    assert log.who("complete", 1) == []


async def test_within_tolerable_failures_the_job_runs_on_and_checkpoints_again() -> None:
    env, storage, sink = endless_job(NotificationLog(), {1}, tolerable_failures=1)

    with anyio.fail_after(10):
        async with env.start("abort") as job:
            await sink.received.wait()
            with pytest.raises(CheckpointError):
                await job.trigger_checkpoint()
            completed = await job.trigger_checkpoint()
            history = job.metrics().checkpoints.history
            status = job.status
            await cancel_and_wait(job)

    assert storage.failed == [1], "the injected storage failure never fired"
    assert completed.checkpoint_id == 2
    assert status is JobStatus.RUNNING
    assert [(r.checkpoint_id, r.status, r.failure_reason) for r in history] == [
        (1, CheckpointStatus.ABORTED.value, STORAGE_FAILED.name),
        (2, CheckpointStatus.COMPLETED.value, None),
    ]


async def test_more_failed_checkpoints_in_a_row_than_tolerable_fail_the_job() -> None:
    env, storage, sink = endless_job(NotificationLog(), {1, 2}, tolerable_failures=1)

    with anyio.fail_after(10):
        async with env.start("abort") as job:
            await sink.received.wait()
            for _ in range(2):
                with pytest.raises(CheckpointError):
                    await job.trigger_checkpoint()
            with pytest.raises(CheckpointError, match="tolerable_failures=1") as failure:
                await job.wait()

    assert storage.failed == [1, 2], "the injected storage failures never fired"
    assert job.status is JobStatus.FAILED
    assert (failure.value.checkpoint_id, failure.value.reason) == (2, STORAGE_FAILED)


async def test_a_completed_checkpoint_resets_the_count_of_failures_in_a_row() -> None:
    env, storage, sink = endless_job(NotificationLog(), {1, 3}, tolerable_failures=1)

    with anyio.fail_after(10):
        async with env.start("abort") as job:
            await sink.received.wait()
            with pytest.raises(CheckpointError):
                await job.trigger_checkpoint()
            await job.trigger_checkpoint()
            with pytest.raises(CheckpointError):
                await job.trigger_checkpoint()
            completed = await job.trigger_checkpoint()
            await cancel_and_wait(job)

    assert storage.failed == [1, 3], "the injected storage failures never fired"
    assert completed.checkpoint_id == 4


async def test_without_restarts_execute_raises_when_checkpoints_keep_failing() -> None:
    env, storage, _ = endless_job(NotificationLog(), range(1, 1_000), tolerable_failures=2)
    env.enable_checkpointing(0.01, tolerable_failures=2)

    with anyio.fail_after(10), pytest.raises(CheckpointError, match="3 checkpoints failed"):
        await env.execute("abort")

    assert storage.failed == [1, 2, 3]


async def test_an_aborted_checkpoints_transaction_is_committed_by_the_next_completed_one() -> None:
    gate = Gate()
    sink: RecordingTwoPhaseCommitSink[int] = RecordingTwoPhaseCommitSink()
    env = StreamEnvironment(batch_size=64)
    env.enable_checkpointing()
    storage = FailingStorage({1}, uid="numbers")
    env.set_checkpoint_storage(storage)
    env.from_source(GatedSource(1_000, gate_at=500, gate=gate), uid="numbers").sink_to(
        sink, uid="sink"
    )

    with anyio.fail_after(10):
        async with env.start("abort") as job:
            await gate.reached.wait()
            with pytest.raises(CheckpointError):
                await job.trigger_checkpoint()
            gate.opened.set()
            await job.wait()

    assert storage.failed == [1], "the injected storage failure never fired"
    assert sink.committed == list(range(1_000))
    assert sink.committed_transactions[0].endswith("/0/0/1")  # the first transaction
    assert sink.open_transactions == []
