"""State of an operator the job no longer has fails a restore, unless it is dropped on purpose."""

from __future__ import annotations

import anyio
import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import MemoryCheckpointStorage, RestoreError, StreamEnvironment
from tests.engine.jobs.checkpoints import Gate, GatedSource
from tests.engine.restore.test_recovery_after_cancel import (
    RECORDS,
    checkpoint_then_cancel,
    sums_job,
)


def job_without_the_sums(
    storage: MemoryCheckpointStorage, sink: CollectSink[int]
) -> StreamEnvironment:
    """The same source, but the keyed 'sums' operator was removed."""
    env = StreamEnvironment(parallelism=2, batch_size=64)
    env.enable_checkpointing()
    env.set_checkpoint_storage(storage)
    (
        env.from_source(GatedSource(RECORDS, gate_at=0, gate=Gate(opened=True)), uid="numbers")
        .map(lambda number: number, uid="pairs")
        .sink_to(sink, uid="numbers-out")
    )
    return env


async def checkpointed_storage() -> MemoryCheckpointStorage:
    storage = MemoryCheckpointStorage()
    gate = Gate()
    await checkpoint_then_cancel(sums_job(CollectSink(), storage, gate=gate), gate)
    return storage


async def test_state_of_a_removed_operator_fails_the_restore_naming_its_uid() -> None:
    storage = await checkpointed_storage()
    env = job_without_the_sums(storage, CollectSink())

    expected = r"operator '(sums|out)'.*allow_non_restored_state=True"
    with anyio.fail_after(10), pytest.raises(RestoreError, match=expected):
        await env.execute("sums", restore_from="latest")


async def test_allow_non_restored_state_drops_it_and_resumes_the_source() -> None:
    storage = await checkpointed_storage()
    sink: CollectSink[int] = CollectSink()
    env = job_without_the_sums(storage, sink)

    with anyio.fail_after(10):
        await env.execute("sums", restore_from="latest", allow_non_restored_state=True)

    assert sorted(sink.results) == list(range(600, RECORDS))  # resumed at the checkpoint
