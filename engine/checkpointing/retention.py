"""CheckpointFiles: which files of completed, subsumed and aborted checkpoints to delete."""

from __future__ import annotations

from collections.abc import Iterable

from lockgate.engine.checkpointing.completed import CompletedCheckpoint
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.shared_registry import SharedStateRegistry
from lockgate.engine.checkpointing.storage import CheckpointStorage, savepoint_folder_for

__all__ = ["CheckpointFiles"]


class CheckpointFiles:
    """Deletes what no retained checkpoint needs any more, and never anything else.

    A subsumed checkpoint's own folder goes at once (a claimed snapshot's folder too, which
    lives outside the job's storage). Its shared files go once no retained checkpoint
    references them, and only while no checkpoint is pending: a pending checkpoint may build
    on a file released meanwhile (its base completed before it was triggered). What an
    aborted checkpoint wrote to the shared folder belongs to no checkpoint and goes at once.
    """

    def __init__(self, job: str, storage: CheckpointStorage, registry: SharedStateRegistry) -> None:
        self.job = job
        self.storage = storage
        self.registry = registry
        self._released: dict[str, StateHandle] = {}

    def retain(self, completed: CompletedCheckpoint) -> None:
        """Count the shared files of a checkpoint that is now retained."""
        self.registry.register(completed.metadata)

    async def discard_subsumed(self, subsumed: CompletedCheckpoint, *, pending: bool) -> None:
        """Delete a checkpoint no longer retained, and its shared files nothing else uses."""
        storage, job = self.storage, self.job
        if subsumed.claimed and not subsumed.location.startswith("memory://"):
            storage = savepoint_folder_for(subsumed.location.rsplit("/", 1)[0])
            job = subsumed.metadata.job_name
        await storage.discard(job, subsumed.checkpoint_id)
        for handle in self.registry.release(subsumed.checkpoint_id):
            self._released[handle.location] = handle
        await self.delete_released(pending=pending)

    async def delete_released(self, *, pending: bool) -> None:
        """Delete the released shared files, unless a checkpoint is ``pending``."""
        if pending or not self._released:
            return
        unused = self.registry.unreferenced(self._released.values())
        self._released.clear()
        if unused:
            await self.storage.discard_shared(unused)

    async def discard_written(self, handles: Iterable[StateHandle]) -> None:
        """Delete the shared files an aborted checkpoint wrote (those it reused are kept)."""
        written = [file for handle in handles for file in handle.shared_files]
        unused = self.registry.unreferenced(written)
        if unused:
            await self.storage.discard_shared(unused)

    def __repr__(self) -> str:
        return f"<CheckpointFiles {self.job!r} released={len(self._released)}>"
