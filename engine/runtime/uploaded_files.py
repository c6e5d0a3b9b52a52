"""UploadedFiles: which shared files a subtask's next native snapshot may reuse."""

from __future__ import annotations

from collections.abc import Mapping

from lockgate.engine.checkpointing.messages import StateHandle

__all__ = ["FileKey", "UploadedFiles"]

FileKey = tuple[str, int]
"""An immutable file of a native snapshot, by local name and size (an SST file)."""


class UploadedFiles:
    """Per operator uid, the shared files the last *completed* checkpoint of the subtask used.

    The rule is ``IncrementalBases``': a snapshot reuses only what a completed checkpoint
    referenced, because the files a pending checkpoint uploads are deleted if it aborts. So
    what a checkpoint used becomes reusable on its notify-complete; a completion of a
    checkpoint this subtask wrote nothing native for (a savepoint) changes nothing. A new
    or restored job has nothing to reuse: its first checkpoint uploads every file.
    """

    def __init__(self) -> None:
        self._bases: dict[str, dict[FileKey, StateHandle]] = {}
        self._pending: dict[int, dict[str, dict[FileKey, StateHandle]]] = {}

    def reusable(self, uid: str) -> Mapping[FileKey, StateHandle]:
        """The uploaded copies of ``uid``'s files that a snapshot may reference now."""
        return self._bases.get(uid, {})

    def written(self, checkpoint_id: int, uid: str, files: Mapping[FileKey, StateHandle]) -> None:
        """Record the files ``uid``'s snapshot for ``checkpoint_id`` references."""
        self._pending.setdefault(checkpoint_id, {})[uid] = dict(files)

    def completed(self, checkpoint_id: int) -> None:
        """Make the files ``checkpoint_id`` used the reusable ones; forget older snapshots."""
        written = self._pending.pop(checkpoint_id, None)
        if written is None:
            return
        for older in [cid for cid in self._pending if cid < checkpoint_id]:
            del self._pending[older]  # subsumed: they never complete now
        self._bases = written

    def aborted(self, checkpoint_id: int) -> None:
        """Forget what ``checkpoint_id`` used: the files it uploaded are deleted."""
        self._pending.pop(checkpoint_id, None)

    def __repr__(self) -> str:
        files = sum(len(files) for files in self._bases.values())
        return f"<UploadedFiles operators={sorted(self._bases)} files={files}>"
