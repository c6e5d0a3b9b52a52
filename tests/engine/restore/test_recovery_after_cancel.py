"""A cancelled job resumes from its checkpoint in a brand-new StreamEnvironment with the same
graph and storage; one CollectSink, the "external system", sees every record exactly once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import (
    CheckpointStorage,
    CompletedCheckpoint,
    FileSystemCheckpointStorage,
    JobClient,
    JobStatus,
    MemoryCheckpointStorage,
    RestoreError,
    StreamEnvironment,
)
from tests.engine.jobs.basic import final_values
from tests.engine.jobs.checkpoints import Gate, GatedSource, SlowRestoreStorage, cancel_and_wait

RECORDS, GATE_AT, KEYS = 1_000, 600, 10
Pair = tuple[int, int]
StorageFactory = Callable[[], str | CheckpointStorage]


def running_sums() -> list[Pair]:
    """Every record the sums job emits: the running sum of each key, in order."""
    totals = dict.fromkeys(range(KEYS), 0)
    emitted = []
    for number in range(RECORDS):
        totals[number % KEYS] += number
        emitted.append((number % KEYS, totals[number % KEYS]))
    return emitted


def sums_job(
    sink: CollectSink[Pair],
    storage: str | CheckpointStorage,
    *,
    gate: Gate,
    max_parallelism: int = 128,
) -> StreamEnvironment:
    """A fresh environment: numbers -> (key, number) -> keyed running sums -> sink."""
    env = StreamEnvironment(parallelism=2, max_parallelism=max_parallelism, batch_size=64)
    env.enable_checkpointing()
    env.set_checkpoint_storage(storage)
    (
        env.from_source(GatedSource(RECORDS, gate_at=GATE_AT, gate=gate), uid="numbers")
        .map(lambda number: (number % KEYS, number), uid="pairs")
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="sums")
        .sink_to(sink, uid="out")
    )
    return env


async def checkpoint_then_cancel(env: StreamEnvironment, gate: Gate) -> CompletedCheckpoint:
    """Run until the source waits at its closed gate, checkpoint, and cancel."""
    with anyio.fail_after(10):
        async with env.start("sums") as job:
            await gate.reached.wait()
            completed = await job.trigger_checkpoint()
            await cancel_and_wait(job)
    return completed


@pytest.fixture(params=["shared memory object", "filesystem object", "file url"])
def storage_factory(request: pytest.FixtureRequest, tmp_path: Path) -> StorageFactory:
    """What each new environment is given: one shared memory storage, or a new storage
    object (or URL) for the same folder."""
    if request.param == "shared memory object":
        shared = MemoryCheckpointStorage()
        return lambda: shared
    if request.param == "filesystem object":
        return lambda: FileSystemCheckpointStorage(tmp_path)
    return lambda: f"file://{tmp_path}"


async def test_a_cancelled_job_resumed_from_latest_commits_every_record_once(
    storage_factory: StorageFactory,
) -> None:
    sink: CollectSink[Pair] = CollectSink()
    first_gate = Gate()
    await checkpoint_then_cancel(sums_job(sink, storage_factory(), gate=first_gate), first_gate)
    assert len(sink.results) < RECORDS, "the first run must not have finished"

    await sums_job(sink, storage_factory(), gate=Gate(opened=True)).execute(
        "sums", restore_from="latest"
    )

    assert sorted(sink.results) == sorted(running_sums())


async def test_a_cancelled_job_resumed_from_a_checkpoint_location_ends_with_exact_sums(
    storage_factory: StorageFactory,
) -> None:
    sink: CollectSink[Pair] = CollectSink()
    first_gate = Gate()
    completed = await checkpoint_then_cancel(
        sums_job(sink, storage_factory(), gate=first_gate), first_gate
    )

    await sums_job(sink, storage_factory(), gate=Gate(opened=True)).execute(
        "sums", restore_from=completed.location
    )

    assert final_values(sink.results) == final_values(running_sums())
    assert len(sink.results) == RECORDS


async def test_a_job_resumed_from_a_checkpoint_keeps_counting_checkpoint_ids_after_it() -> None:
    storage = MemoryCheckpointStorage()
    first_gate = Gate()
    completed = await checkpoint_then_cancel(
        sums_job(CollectSink(), storage, gate=first_gate), first_gate
    )

    result = await sums_job(CollectSink(), storage, gate=Gate(opened=True)).execute(
        "sums", restore_from="latest"
    )

    final = result.metrics.checkpoints.latest_completed
    assert final.checkpoint_id == completed.checkpoint_id + 1


async def test_restoring_latest_when_the_job_has_no_checkpoint_raises_restore_error() -> None:
    env = sums_job(CollectSink(), MemoryCheckpointStorage(), gate=Gate(opened=True))

    with pytest.raises(RestoreError, match="'sums' has no completed checkpoint"):
        await env.execute("sums", restore_from="latest")


async def test_restoring_into_another_max_parallelism_raises_restore_error_naming_it() -> None:
    storage = MemoryCheckpointStorage()
    first_gate = Gate()
    await checkpoint_then_cancel(sums_job(CollectSink(), storage, gate=first_gate), first_gate)
    env = sums_job(CollectSink(), storage, gate=Gate(opened=True), max_parallelism=64)

    with anyio.fail_after(10), pytest.raises(RestoreError, match="max_parallelism 128"):
        await env.execute("sums", restore_from="latest")


async def checkpoint_completed(job: JobClient, completed: list[CompletedCheckpoint]) -> None:
    completed.append(await job.trigger_checkpoint())


async def test_a_checkpoint_triggered_while_a_running_job_restores_its_state_completes() -> None:
    storage = SlowRestoreStorage()
    storage.release.set()
    first_gate = Gate()
    await checkpoint_then_cancel(sums_job(CollectSink(), storage, gate=first_gate), first_gate)
    storage.release = anyio.Event()
    completed: list[CompletedCheckpoint] = []

    with anyio.fail_after(10):
        async with sums_job(CollectSink(), storage, gate=Gate()).start(
            "sums", restore_from="latest"
        ) as job:
            await storage.reading.wait()
            assert job.status is JobStatus.RUNNING
            async with anyio.create_task_group() as group:
                group.start_soon(checkpoint_completed, job, completed)
                await anyio.wait_all_tasks_blocked()
                storage.release.set()
            await cancel_and_wait(job)

    assert [checkpoint.checkpoint_id for checkpoint in completed] == [2]
