"""Deleting what no checkpoint needs never fails a job: a storage that refuses deletes keeps
its files until it allows them, and files a subtask wrote after its checkpoint was aborted are
deleted when its late acknowledgement or decline arrives."""

from __future__ import annotations

from collections.abc import Container, Iterable
from pathlib import Path
from typing import Any

import anyio
import pytest

from lockgate.engine import (
    CheckpointError,
    CheckpointFailureReason,
    FileSystemCheckpointStorage,
    JobClient,
    JobStatus,
    ManualClock,
    RestartStrategy,
    StreamEnvironment,
)
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.storage.layout import LOCK_NAME
from lockgate.engine.testing import InjectedFailure, RecordingTwoPhaseCommitSink
from tests.engine.jobs.async_io import wait_until
from tests.engine.jobs.basic import EndlessSource
from tests.engine.jobs.checkpoints import (
    Gate,
    GatedSource,
    ListeningCounter,
    ListeningSink,
    NotificationLog,
    cancel_and_wait,
)

JOB = "housekeeping"


class RefusingDeletes(FileSystemCheckpointStorage):
    """Filesystem storage that refuses every delete while ``refusing`` is set, as a folder
    the job may not delete in does; ``refused`` lists the checkpoint folders it kept.

    The state write of the source's first subtask fails for the checkpoints in ``failing``
    (that subtask declines them, so they are aborted).
    """

    def __init__(self, base: Path, *, failing: Container[int] = ()) -> None:
        super().__init__(base)
        self.refusing = True
        self.refused: list[int] = []
        self.refused_shared = 0
        self.failing = failing

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        if checkpoint_id in self.failing and name.startswith("numbers-") and name.endswith("-0"):
            raise OSError(f"injected write failure for checkpoint {checkpoint_id}")
        return await super().write_state(job, checkpoint_id, name, data)

    async def discard(self, job: str, checkpoint_id: int) -> None:
        if self.refusing:
            self.refused.append(checkpoint_id)
            raise PermissionError(13, "Permission denied", str(self._folder(job, checkpoint_id)))
        await super().discard(job, checkpoint_id)

    async def discard_shared(self, handles: Iterable[StateHandle]) -> None:
        handles = list(handles)
        if self.refusing and handles:
            self.refused_shared += len(handles)
            raise PermissionError(13, "Permission denied", handles[0].location)
        await super().discard_shared(handles)


def counting_job(storage: FileSystemCheckpointStorage) -> tuple[StreamEnvironment, ListeningSink]:
    """Two source subtasks -> key_by -> two counter+sink subtasks, incremental checkpoints
    retaining one, no restarts: any failure of the coordinator fails the job."""
    env = StreamEnvironment(parallelism=2, batch_size=64, channel_capacity=256)
    env.enable_checkpointing(max_retained=1)
    env.set_restart_strategy(RestartStrategy.none())
    env.set_checkpoint_storage(storage)
    env.set_state_backend("memory", incremental=True)
    sink = ListeningSink(NotificationLog())
    (
        env.from_source(EndlessSource(), uid="numbers")
        .key_by(lambda number: number % 8)
        .process(ListeningCounter(NotificationLog()), uid="counter")
        .sink_to(sink, uid="sink")
    )
    return env, sink


def entries(folder: Path) -> set[str]:
    """The checkpoint folders and shared files of the job folder (its lock file aside)."""
    if not folder.is_dir():
        return set()
    return {path.name for path in folder.iterdir()} - {LOCK_NAME}


def shared_of(handles: Iterable[StateHandle | None]) -> set[str]:
    return {Path(file.location).name for h in handles if h is not None for file in h.shared_files}


async def test_a_storage_whose_deletes_always_fail_keeps_the_job_running(tmp_path: Path) -> None:
    storage = RefusingDeletes(tmp_path, failing={2})
    env, sink = counting_job(storage)

    with anyio.fail_after(10):
        async with env.start(JOB) as job:
            await sink.received.wait()
            await job.trigger_checkpoint()
            with pytest.raises(CheckpointError):  # aborted; its folder cannot be deleted
                await job.trigger_checkpoint()
            await job.trigger_checkpoint()  # subsumes checkpoint 1, which cannot be deleted
            last = await job.trigger_checkpoint()
            status, attempt = job.status, job.metrics().attempt
            await cancel_and_wait(job)

    assert {1, 2, 3} <= set(storage.refused), "the refused deletes never happened"
    assert (last.checkpoint_id, status, attempt) == (4, JobStatus.RUNNING, 0)
    assert {"chk-1", "chk-3", "chk-4"} <= entries(tmp_path / JOB)  # kept, not lost


async def test_what_could_not_be_deleted_is_deleted_once_the_storage_works_again(
    tmp_path: Path,
) -> None:
    storage = RefusingDeletes(tmp_path, failing={2})
    env, sink = counting_job(storage)

    with anyio.fail_after(10):
        async with env.start(JOB) as job:
            await sink.received.wait()
            await job.trigger_checkpoint()
            with pytest.raises(CheckpointError):  # aborted; nothing it wrote can be deleted
                await job.trigger_checkpoint()
            await job.trigger_checkpoint()  # subsumes checkpoint 1, which cannot be deleted
            storage.refusing = False
            last = await job.trigger_checkpoint()
            await cancel_and_wait(job)

    assert storage.refused and storage.refused_shared, "the refused deletes never happened"
    assert entries(tmp_path / JOB) == {"chk-4", "shared"}
    assert entries(tmp_path / JOB / "shared") == shared_of(
        last.metadata.operators["counter"].handles
    )


class TripOnce:
    """A map that raises ``InjectedFailure`` once, at the first record after ``armed``."""

    def __init__(self) -> None:
        self.armed = False
        self.fired = False

    def __deepcopy__(self, memo: dict[int, Any]) -> TripOnce:
        return self

    def __call__(self, number: int) -> int:
        if self.armed and not self.fired:
            self.fired = True
            raise InjectedFailure("injected once, after refused deletes")
        return number


async def test_what_one_attempt_could_not_delete_the_next_attempt_deletes(tmp_path: Path) -> None:
    storage, trip = RefusingDeletes(tmp_path), TripOnce()
    env = StreamEnvironment(parallelism=2, batch_size=64, channel_capacity=256)
    env.enable_checkpointing(max_retained=1)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))
    env.set_checkpoint_storage(storage)
    sink = ListeningSink(NotificationLog())
    env.from_source(EndlessSource(), uid="numbers").map(trip).sink_to(sink, uid="sink")

    with anyio.fail_after(10):
        async with env.start(JOB) as job:
            await sink.received.wait()
            await job.trigger_checkpoint()
            await job.trigger_checkpoint()  # subsumes checkpoint 1, which cannot be deleted
            trip.armed = True
            await wait_until(lambda: job.metrics().attempt == 1)
            storage.refusing = False
            last = await job.trigger_checkpoint()
            await cancel_and_wait(job)

    assert trip.fired and storage.refused == [1], "the injected failures never fired"
    assert entries(tmp_path / JOB) == {f"chk-{last.checkpoint_id}"}


TIMEOUT = 10.0


class WatchedStorage(FileSystemCheckpointStorage):
    """Filesystem storage that says when a state file of checkpoint 1 has been written."""

    def __init__(self, base: Path) -> None:
        super().__init__(base)
        self.wrote_first = anyio.Event()

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        handle = await super().write_state(job, checkpoint_id, name, data)
        if checkpoint_id == 1:
            self.wrote_first.set()
        return handle


async def expect_abort(job: JobClient, failures: list[CheckpointError]) -> None:
    with pytest.raises(CheckpointError) as failure:
        await job.trigger_checkpoint()
    failures.append(failure.value)


async def test_a_late_acknowledgement_of_an_aborted_checkpoint_deletes_the_folder_it_wrote(
    tmp_path: Path,
) -> None:
    clock, storage = ManualClock(), WatchedStorage(tmp_path)
    sink = ListeningSink(NotificationLog(), block_at=1)  # its snapshot for 1 waits for release
    env = StreamEnvironment(clock=clock)
    env.enable_checkpointing(timeout=TIMEOUT)
    env.set_checkpoint_storage(storage)
    source = GatedSource(100, gate_at=50, gate=Gate())
    env.from_source(source, uid="numbers").sink_to(sink, uid="sink")
    failures: list[CheckpointError] = []

    with anyio.fail_after(10):
        async with env.start(JOB) as job:
            await sink.received.wait()
            async with anyio.create_task_group() as group:
                group.start_soon(expect_abort, job, failures)
                await sink.snapshot_started.wait()
                await anyio.wait_all_tasks_blocked()
                clock.advance(TIMEOUT)  # checkpoint 1 times out; its folder is deleted
            sink.release.set()  # the subtask writes checkpoint 1's files now, then acknowledges
            await storage.wrote_first.wait()
            await wait_until(lambda: not (tmp_path / JOB / "chk-1").exists(), within=5)
            await cancel_and_wait(job)

    assert [(f.checkpoint_id, f.reason) for f in failures] == [(1, CheckpointFailureReason.TIMEOUT)]


class StalledThenFailing(FileSystemCheckpointStorage):
    """Filesystem storage whose first state write for checkpoint 1 waits for ``release``
    (``stalled`` says it waits; ``wrote`` that it then wrote), and whose second fails.

    The wait is shielded, as a write already running in a worker thread is: the abort that
    cancels the subtask's asynchronous part cannot stop it, so the subtask writes late.
    """

    def __init__(self, base: Path) -> None:
        super().__init__(base)
        self.stalled, self.release, self.wrote = anyio.Event(), anyio.Event(), anyio.Event()
        self.failed = False

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        if checkpoint_id == 1 and self.wrote.is_set():
            self.failed = True
            raise OSError("injected write failure after the abort")
        if checkpoint_id == 1:
            self.stalled.set()
            with anyio.CancelScope(shield=True):
                await self.release.wait()
                handle = await super().write_state(job, checkpoint_id, name, data)
        else:
            handle = await super().write_state(job, checkpoint_id, name, data)
        if checkpoint_id == 1:
            self.wrote.set()
        return handle


async def test_a_late_decline_of_an_aborted_checkpoint_deletes_the_folder_its_subtask_wrote(
    tmp_path: Path,
) -> None:
    clock, storage = ManualClock(), StalledThenFailing(tmp_path)
    env = StreamEnvironment(clock=clock)
    env.enable_checkpointing(timeout=TIMEOUT)
    env.set_checkpoint_storage(storage)
    source = GatedSource(100, gate_at=50, gate=Gate())
    env.from_source(source, uid="numbers").sink_to(RecordingTwoPhaseCommitSink[int](), uid="sink")
    failures: list[CheckpointError] = []

    with anyio.fail_after(10):
        async with env.start(JOB) as job:
            async with anyio.create_task_group() as group:
                group.start_soon(expect_abort, job, failures)
                await storage.stalled.wait()
                await anyio.wait_all_tasks_blocked()
                clock.advance(TIMEOUT)  # checkpoint 1 times out; its folder is deleted
            storage.release.set()  # one file is written now, the next fails: a late decline
            await storage.wrote.wait()
            await wait_until(lambda: not (tmp_path / JOB / "chk-1").exists(), within=5)
            await cancel_and_wait(job)

    assert storage.failed, "the injected write failure never fired"
    assert [(f.checkpoint_id, f.reason) for f in failures] == [(1, CheckpointFailureReason.TIMEOUT)]
