"""CompletedBases: per operator, what the last *completed* checkpoint of a subtask wrote."""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["CompletedBases"]

T = TypeVar("T")


class CompletedBases(Generic[T]):
    """What a subtask wrote per operator uid for each checkpoint, and the completed one's.

    An incremental snapshot may build only on what a *completed* checkpoint wrote: the files
    a pending checkpoint wrote are deleted if it aborts. So what a checkpoint wrote becomes
    the base on its notify-complete (which also forgets older pending checkpoints: they are
    subsumed); a completion of a checkpoint this subtask wrote nothing for changes no base. A
    new or restored job has no base, so its first snapshot is whole.
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
