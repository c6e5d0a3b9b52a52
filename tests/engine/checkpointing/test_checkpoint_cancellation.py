"""Cancelling a job while a checkpoint is in flight ends the job as cancelled, not failed."""

from __future__ import annotations

import anyio
import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import CheckpointError, JobClient, JobStatus, StreamEnvironment
from tests.engine.jobs.checkpoints import Gate, GatedSource, ThreadBlockedStorage


async def trigger_checkpoint(job: JobClient) -> None:
    # the checkpoint is aborted by the cancellation; only the job's outcome matters here
    with pytest.raises(CheckpointError):
        await job.trigger_checkpoint()


async def test_cancelling_a_job_while_a_subtask_writes_its_state_ends_it_cancelled() -> None:
    gate = Gate()
    storage = ThreadBlockedStorage(uid="out")
    env = StreamEnvironment()
    env.enable_checkpointing()
    env.set_checkpoint_storage(storage)
    env.from_source(GatedSource(10, gate_at=5, gate=gate), uid="numbers").sink_to(
        CollectSink(), uid="out"
    )

    with anyio.fail_after(10):
        async with env.start("cancelled") as job:
            await gate.reached.wait()
            async with anyio.create_task_group() as group:
                group.start_soon(trigger_checkpoint, job)
                await storage.writing.wait()
                job.cancel()
                await anyio.wait_all_tasks_blocked()  # everything but the writing thread ended
                storage.release.set()
                group.cancel_scope.cancel()
            result = await job.wait()

    assert result.status is JobStatus.CANCELED
