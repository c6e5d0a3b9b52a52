"""CheckpointFiles: which files of completed, subsumed and aborted checkpoints to delete."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from lockgate.engine.checkpointing.completed import CompletedCheckpoint
from lockgate.engine.checkpointing.gil_handoff import HANDOFF
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.shared_registry import SharedStateRegistry
from lockgate.engine.checkpointing.storage import CheckpointStorage, savepoint_folder_for

__all__ = ["CheckpointFiles"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Folder:
    """The folder of one checkpoint that is to be deleted, and why."""

    storage: CheckpointStorage
    job: str
    checkpoint_id: int
    why: str


class CheckpointFiles:
    """Deletes what no retained checkpoint needs any more, and never anything else.

    A subsumed checkpoint's own folder goes at once (a claimed snapshot's folder too, which
    lives outside the job's storage). Its shared files go once no retained checkpoint
    references them, and only while no checkpoint is pending: a pending checkpoint may build
    on a file released meanwhile (its base completed before it was triggered). What an
    aborted checkpoint wrote to the shared folder belongs to no checkpoint and goes at once.
    A subtask still writing when its checkpoint was aborted creates the deleted folder again:
    its late acknowledgement (or decline) deletes that folder again, and the shared files
    it wrote.

    Deleting never fails the job. A delete the storage refuses is logged at WARNING (with
    the job, the checkpoint id and the cause) and tried again whenever files are deleted
    next (a checkpoint completes or is aborted) until the storage allows it; the files stay
    meanwhile. Each time, every new deletion is tried once and the waiting folders are
    retried oldest first up to the first one refused again, so a storage that refuses
    everything costs a few calls per checkpoint, not one per checkpoint ever taken. The
    job master keeps one ``CheckpointFiles`` for all attempts of a job, so a restarted
    attempt deletes what an earlier one could not.
    """

    def __init__(self, job: str, storage: CheckpointStorage, registry: SharedStateRegistry) -> None:
        self.job = job
        self.storage = storage
        self.registry = registry
        self._released: dict[str, tuple[int, StateHandle]] = {}
        self._waiting: deque[_Folder] = deque()
        self._elsewhere: dict[int, CheckpointStorage] = {}

    def retain(self, completed: CompletedCheckpoint) -> None:
        """Count the shared files of a checkpoint that is now retained."""
        self.registry.register(completed.metadata)

    async def discard_subsumed(
        self, subsumed: Iterable[CompletedCheckpoint], *, pending: bool
    ) -> None:
        """Delete the checkpoints no longer retained, and their shared files nothing uses.

        Called whenever a checkpoint completes, with the checkpoints it subsumed (maybe
        none): deletions refused before are tried again first.
        """
        await self._retry_folders()
        for checkpoint in subsumed:
            await self._discard_folder(self._folder_of(checkpoint))
            for handle in self.registry.release(checkpoint.checkpoint_id):
                self._released[handle.location] = (checkpoint.checkpoint_id, handle)
        await self._delete_released(pending=pending)

    async def discard_aborted(
        self,
        storage: CheckpointStorage,
        checkpoint_id: int,
        written: Iterable[StateHandle],
        *,
        pending: bool,
    ) -> None:
        """Delete an aborted checkpoint's folder in ``storage`` and the shared files it wrote.

        ``written`` are the handles its subtasks acknowledged; the shared files they reuse
        are kept. ``storage`` is the job's, or a savepoint's own folder.
        """
        await self._retry_folders()
        if storage is not self.storage:  # where late acknowledgements wrote too
            self._elsewhere[checkpoint_id] = storage
        await self._discard_folder(_Folder(storage, self.job, checkpoint_id, "aborted"))
        await self._discard_written(checkpoint_id, written)
        await self._delete_released(pending=pending)

    async def discard_late(self, checkpoint_id: int, written: Iterable[StateHandle]) -> None:
        """Delete what a subtask wrote for a checkpoint aborted before it answered.

        The abort deleted the checkpoint's folder while the subtask was still writing into
        it: the folder goes again, with the shared files the subtask acknowledged (none for a
        decline: a subtask whose write failed deletes the shared files it wrote itself).
        """
        if self.registry.is_registered(checkpoint_id):
            return  # every subtask answered a completed checkpoint once: never delete it
        storage = self._elsewhere.get(checkpoint_id, self.storage)
        await self._discard_folder(_Folder(storage, self.job, checkpoint_id, "aborted"))
        await self._discard_written(checkpoint_id, written)

    async def _delete_released(self, *, pending: bool) -> None:
        if pending or not self._released:
            return
        released, self._released = self._released, {}
        unused = self.registry.unreferenced(handle for _, handle in released.values())
        first = min(checkpoint_id for checkpoint_id, _ in released.values())
        if unused and not await self._discard_shared(first, unused):
            for handle in unused:  # tried again once no checkpoint is pending
                self._released[handle.location] = released[handle.location]

    async def _discard_written(self, checkpoint_id: int, written: Iterable[StateHandle]) -> None:
        files = [file for handle in written for file in handle.shared_files]
        unused = self.registry.unreferenced(files)
        if unused and not await self._discard_shared(checkpoint_id, unused):
            for handle in unused:  # nothing builds on them; tried again with the released
                self._released[handle.location] = (checkpoint_id, handle)

    async def _discard_shared(self, checkpoint_id: int, files: list[StateHandle]) -> bool:
        try:
            with HANDOFF.lend():
                await self.storage.discard_shared(files)
        except Exception as error:  # a storage's failure to delete must not fail the job
            what = f"{len(files)} shared files of checkpoint"
            self._refused(self.storage, what, checkpoint_id, error)
            return False
        return True

    async def _discard_folder(self, folder: _Folder) -> None:
        if not await self._deleted(folder) and folder not in self._waiting:
            self._waiting.append(folder)

    async def _retry_folders(self) -> None:
        for _ in range(len(self._waiting)):
            folder = self._waiting.popleft()
            if not await self._deleted(folder):
                self._waiting.append(folder)
                return  # the storage still refuses: the others wait for the next attempt

    async def _deleted(self, folder: _Folder) -> bool:
        try:
            with HANDOFF.lend():
                await folder.storage.discard(folder.job, folder.checkpoint_id)
        except Exception as error:  # a storage's failure to delete must not fail the job
            what = f"the folder of {folder.why} checkpoint"
            self._refused(folder.storage, what, folder.checkpoint_id, error)
            return False
        return True

    def _refused(
        self, storage: CheckpointStorage, what: str, checkpoint_id: int, error: Exception
    ) -> None:
        _log.warning(
            "job '%s' could not delete %s %d: %r; the files stay, and deleting them is tried "
            "again when a later checkpoint completes or aborts; check that the job may "
            "delete in %r",
            self.job,
            what,
            checkpoint_id,
            error,
            storage,
            extra={"job": self.job, "checkpoint_id": checkpoint_id},
        )

    def _folder_of(self, subsumed: CompletedCheckpoint) -> _Folder:
        if subsumed.claimed and not subsumed.location.startswith("memory://"):
            storage = savepoint_folder_for(subsumed.location.rsplit("/", 1)[0])
            return _Folder(storage, subsumed.metadata.job_name, subsumed.checkpoint_id, "claimed")
        return _Folder(self.storage, self.job, subsumed.checkpoint_id, "subsumed")

    def __repr__(self) -> str:
        return (
            f"<CheckpointFiles {self.job!r} released={len(self._released)} "
            f"waiting={[folder.checkpoint_id for folder in self._waiting]}>"
        )
