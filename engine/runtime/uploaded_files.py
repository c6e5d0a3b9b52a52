"""UploadedFiles: which shared files a subtask's next native snapshot may reuse."""

from __future__ import annotations

from collections.abc import Mapping

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.runtime.completed_bases import CompletedBases

__all__ = ["FileKey", "UploadedFiles"]

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
