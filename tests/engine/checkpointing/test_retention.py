"""CheckpointFiles: a delete the storage refuses never raises; it is logged, kept and done
once the storage allows it; a late acknowledgement deletes its aborted checkpoint's folder."""

from __future__ import annotations

import logging
from collections.abc import Iterable

import pytest

from lockgate.engine import MemoryCheckpointStorage
from lockgate.engine.checkpointing.completed import CompletedCheckpoint
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.retention import CheckpointFiles
from lockgate.engine.checkpointing.shared_registry import SharedStateRegistry
from lockgate.engine.errors import CheckpointNotFound

JOB = "job"


class RefusingStorage(MemoryCheckpointStorage):
    """Memory storage that refuses every delete while ``refusing``; ``asked`` lists the
    checkpoint folders it was asked to delete."""

    def __init__(self) -> None:
        super().__init__()
        self.refusing = True
        self.asked: list[int] = []

    async def discard(self, job: str, checkpoint_id: int) -> None:
        self.asked.append(checkpoint_id)
        if self.refusing:
            raise PermissionError(13, "Permission denied", f"{job}/chk-{checkpoint_id}")
        await super().discard(job, checkpoint_id)

    async def discard_shared(self, handles: Iterable[StateHandle]) -> None:
        if self.refusing:
            raise PermissionError(13, "Permission denied", f"{JOB}/shared")
        await super().discard_shared(handles)


async def completed(storage: MemoryCheckpointStorage, checkpoint_id: int) -> CompletedCheckpoint:
    """A checkpoint of one operator whose state is one shared file, written to ``storage``."""
    shared = await storage.write_shared(JOB, f"delta-{checkpoint_id}", b"state")
    operators = {"op": OperatorStateHandles(1, (shared,))}
    metadata = CheckpointMetadata(JOB, checkpoint_id, 0.0, 8, operators)
    location = await storage.write_metadata(metadata)
    return CompletedCheckpoint(checkpoint_id, 0.0, 0.0, location, metadata)


def files_of(storage: MemoryCheckpointStorage) -> CheckpointFiles:
    return CheckpointFiles(JOB, storage, SharedStateRegistry())


async def exists(storage: MemoryCheckpointStorage, handle: StateHandle) -> bool:
    try:
        await storage.read_state(handle)
    except CheckpointNotFound:
        return False
    return True


def shared_file(checkpoint: CompletedCheckpoint) -> StateHandle:
    handle = checkpoint.metadata.operators["op"].handles[0]
    assert handle is not None
    return handle


async def test_a_subsumed_checkpoint_the_storage_refuses_to_delete_is_kept() -> None:
    storage = RefusingStorage()
    files, first = files_of(storage), await completed(storage, 1)
    files.retain(first)

    await files.discard_subsumed([first], pending=False)

    assert storage.asked == [1], "the refused delete never happened"
    assert await storage.completed(JOB) == [1]
    assert await exists(storage, shared_file(first))


async def test_a_refused_delete_is_logged_at_warning_with_the_checkpoint_id_and_the_cause(
    caplog: pytest.LogCaptureFixture,
) -> None:
    storage = RefusingStorage()
    files, first = files_of(storage), await completed(storage, 1)
    files.retain(first)

    with caplog.at_level(logging.WARNING, logger="lockgate"):
        await files.discard_subsumed([first], pending=False)

    folder, shared = caplog.records
    assert {folder.levelno, shared.levelno} == {logging.WARNING}
    assert folder.name == shared.name == "lockgate.engine.checkpointing.retention"
    for record in (folder, shared):
        assert (record.job, record.checkpoint_id) == (JOB, 1)
    assert "folder of subsumed checkpoint 1: PermissionError" in folder.getMessage()
    assert "1 shared files of checkpoint 1: PermissionError" in shared.getMessage()


async def test_what_was_refused_is_deleted_at_a_later_completion_once_the_storage_allows() -> None:
    storage = RefusingStorage()
    files, first = files_of(storage), await completed(storage, 1)
    files.retain(first)
    await files.discard_subsumed([first], pending=False)

    storage.refusing = False
    await files.discard_subsumed([], pending=False)  # the next checkpoint subsumed none

    assert await storage.completed(JOB) == []
    assert not await exists(storage, shared_file(first))


async def test_refused_shared_files_are_not_deleted_later_while_a_checkpoint_is_pending() -> None:
    storage = RefusingStorage()
    files, first = files_of(storage), await completed(storage, 1)
    files.retain(first)
    await files.discard_subsumed([first], pending=False)
    storage.refusing = False

    await files.discard_subsumed([], pending=True)
    kept = await exists(storage, shared_file(first))
    await files.discard_subsumed([], pending=False)

    assert kept  # a pending checkpoint may build on it
    assert not await exists(storage, shared_file(first))


async def test_a_storage_refusing_every_delete_is_asked_twice_per_checkpoint_at_most() -> None:
    storage = RefusingStorage()
    files = files_of(storage)
    for checkpoint_id in range(1, 6):
        checkpoint = await completed(storage, checkpoint_id)
        files.retain(checkpoint)
        await files.discard_subsumed([checkpoint], pending=False)

    asked = len(storage.asked)
    storage.refusing = False
    await files.discard_subsumed([], pending=False)

    assert asked == 1 + 2 * 4  # the new folder, and the oldest waiting one again
    assert await storage.completed(JOB) == []


async def test_a_late_acknowledgement_deletes_its_aborted_checkpoints_folder_again() -> None:
    storage = MemoryCheckpointStorage()
    files = files_of(storage)
    await files.discard_aborted(storage, 3, [], pending=False)
    late = await storage.write_state(JOB, 3, "op-0", b"written after the abort")

    await files.discard_late(3, [late])

    assert not await exists(storage, late)


async def test_a_late_acknowledgement_of_an_aborted_savepoint_deletes_in_its_folder() -> None:
    storage, savepoint = MemoryCheckpointStorage(), MemoryCheckpointStorage()
    files = files_of(storage)
    await files.discard_aborted(savepoint, 3, [], pending=False)
    late = await savepoint.write_state(JOB, 3, "op-0", b"written after the abort")

    await files.discard_late(3, [late])

    assert not await exists(savepoint, late)


async def test_a_late_acknowledgement_keeps_the_shared_files_it_builds_on() -> None:
    storage = MemoryCheckpointStorage()
    files, first = files_of(storage), await completed(storage, 1)
    files.retain(first)
    own = await storage.write_shared(JOB, "delta-2", b"delta")
    late = StateHandle(own.location, own.size, own.checksum, (shared_file(first),), True)

    await files.discard_late(2, [late])

    assert not await exists(storage, own)
    assert await exists(storage, shared_file(first))


async def test_a_late_answer_naming_a_retained_checkpoint_deletes_nothing() -> None:
    storage = MemoryCheckpointStorage()
    files, first = files_of(storage), await completed(storage, 1)
    files.retain(first)

    await files.discard_late(1, [shared_file(first)])

    assert await storage.completed(JOB) == [1]
    assert await exists(storage, shared_file(first))
