"""``await job.trigger_checkpoint()`` returns once every subtask has committed the checkpoint:
what it made visible in the job's transactional sinks is there when the call returns.

Flink's ``notifyCheckpointComplete`` is asynchronous, and so is lockgate's: periodic
checkpoints never wait for it. A client that asked for a checkpoint waits for the commits too.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.to_thread
import pytest

from lockgate.connectors import CollectSink
from lockgate.connectors.memory import CollectTransaction
from lockgate.engine import JobError, StreamEnvironment
from tests.engine.jobs.checkpoints import Gate, GatedSource


class SlowCommitSink(CollectSink[int]):
    """A ``CollectSink`` whose commit waits for a worker thread first, as a sink's I/O does.

    ``held`` (when set) holds every commit until ``release`` is set.
    """

    def __init__(self) -> None:
        super().__init__()
        self.held: anyio.Event | None = None
        self.committing = anyio.Event()

    async def commit(self, txn: CollectTransaction[int]) -> None:
        self.committing.set()
        await anyio.to_thread.run_sync(lambda: None)  # other tasks run meanwhile
        if self.held is not None:
            await self.held.wait()
        await super().commit(txn)


def gated_job(sink: CollectSink[int], gate: Gate) -> StreamEnvironment:
    """Ten numbers rebalanced into two sink subtasks; then the source waits at its gate."""
    env = StreamEnvironment(parallelism=2)
    env.enable_checkpointing(None)
    env.from_source(GatedSource(10, gate_at=10, gate=gate), uid="numbers").rebalance().sink_to(
        sink, uid="out"
    )
    return env


async def test_trigger_checkpoint_returns_once_every_sink_committed_it() -> None:
    sink, gate = SlowCommitSink(), Gate()

    async with gated_job(sink, gate).start("commits") as job:
        await gate.reached.wait()
        completed = await job.trigger_checkpoint()
        visible = sorted(sink.results)
        job.cancel()

    assert completed.checkpoint_id == 1
    assert visible == list(range(10))


async def test_a_checkpoint_whose_commit_the_attempt_never_finished_raises_a_job_error() -> None:
    sink, gate = SlowCommitSink(), Gate()
    sink.held = anyio.Event()  # never set: the commit is still waiting when the job is cancelled
    outcome: list[Any] = []

    async with gated_job(sink, gate).start("commits") as job:
        await gate.reached.wait()

        async def trigger() -> None:
            with pytest.raises(JobError) as raised:
                await job.trigger_checkpoint()
            outcome.append(raised.value)

        async with anyio.create_task_group() as group:
            group.start_soon(trigger)
            await sink.committing.wait()
            job.cancel()

    (error,) = outcome
    assert "checkpoint 1 completed" in str(error)
    assert "before every subtask committed it" in str(error)
