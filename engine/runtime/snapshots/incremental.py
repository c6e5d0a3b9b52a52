"""What a subtask's next incremental snapshot may build on: only what a completed checkpoint wrote.

``CompletedBases`` holds the rule; ``IncrementalBases`` applies it to the heap snapshots a
delta is computed against, ``UploadedFiles`` to the shared files a native (RocksDB)
snapshot may reference instead of uploading them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.state import KeyedStateSnapshot

__all__ = [
    "FULL_SNAPSHOT_EVERY",
    "CompletedBases",
    "FileKey",
    "Increment",
    "IncrementalBases",
    "UploadedFiles",
]

T = TypeVar("T")

FULL_SNAPSHOT_EVERY = 20
"""Incremental chains hold at most this many files: a full snapshot and its deltas."""


class CompletedBases(Generic[T]):
    """What a subtask wrote per operator uid for each checkpoint, and the completed one's.

    An incremental snapshot may build only on what a *completed* checkpoint wrote: the files
    a pending checkpoint wrote are deleted if it aborts. So what a checkpoint wrote becomes
    the base on its notify-complete (which also forgets older pending checkpoints: they are
    subsumed); a completion of a checkpoint this subtask wrote nothing for changes no base.
    That is safe because an operator with a base writes for every checkpoint (a delta with no
    changes too: ``OperatorSnapshot.is_empty``), so the completed checkpoint references the
    files the next delta builds on and retention keeps them. A new or restored job has no
    base, so its first snapshot is whole.
    """

    def __init__(self) -> None:
        self._bases: dict[str, T] = {}
        self._pending: dict[int, dict[str, T]] = {}

    def base(self, uid: str) -> T | None:
        """What ``uid`` wrote for the last completed checkpoint, if anything."""
        return self._bases.get(uid)

    def written(self, checkpoint_id: int, uid: str, value: T) -> None:
        """Record what ``uid`` wrote for ``checkpoint_id``; a base once it completes."""
        self._pending.setdefault(checkpoint_id, {})[uid] = value

    def completed(self, checkpoint_id: int) -> None:
        """Make what ``checkpoint_id`` wrote the bases; forget older pending checkpoints."""
        written = self._pending.pop(checkpoint_id, None)
        for older in [cid for cid in self._pending if cid < checkpoint_id]:
            del self._pending[older]
        if written is not None:
            self._bases = written

    def aborted(self, checkpoint_id: int) -> None:
        """Forget what ``checkpoint_id`` wrote: it is deleted."""
        self._pending.pop(checkpoint_id, None)

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} bases={sorted(self._bases)} pending={sorted(self._pending)}>"
        )


@dataclass(frozen=True, slots=True)
class Increment:
    """The keyed snapshot written for one checkpoint, and the handle of the file written."""

    keyed: KeyedStateSnapshot
    handle: StateHandle

    def chain(self) -> tuple[StateHandle, ...]:
        """The files a delta on top of this one builds on: this one's, then this one."""
        return (*self.handle.shared, self.handle.plain())


class IncrementalBases(CompletedBases[Increment]):
    """Per operator uid, the keyed snapshot of the last completed checkpoint a delta builds on.

    The rule of ``CompletedBases``: a delta builds only on what a completed checkpoint wrote.
    A chain holds at most ``full_every`` files (one full snapshot and its deltas); then the
    next snapshot is a full one again, which bounds restore time.
    """

    def __init__(self, full_every: int = FULL_SNAPSHOT_EVERY) -> None:
        if full_every < 1:
            raise ValueError(f"full_every must be at least 1; got {full_every}")
        super().__init__()
        self.full_every = full_every

    def base_for(self, uid: str) -> Increment | None:
        """The snapshot a delta of ``uid`` may build on now, or ``None`` for a full one."""
        base = self.base(uid)
        if base is None or len(base.chain()) + 1 > self.full_every:
            return None
        return base


FileKey = tuple[str, int]
"""An immutable file of a native snapshot, by local name and size (an SST file)."""


class UploadedFiles(CompletedBases[dict[FileKey, StateHandle]]):
    """Per operator uid, the shared files the last *completed* checkpoint of the subtask used.

    The rule of ``CompletedBases``: a snapshot reuses only what a completed checkpoint
    referenced, because the files a pending checkpoint uploads are deleted if it aborts.
    """

    def reusable(self, uid: str) -> Mapping[FileKey, StateHandle]:
        """The uploaded copies of ``uid``'s files that a snapshot may reference now."""
        return self.base(uid) or {}
