"""HeapVersions: the memory backend's snapshots in one checkpoint, released when it ends."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import anyio.lowlevel

from lockgate.engine.runtime.snapshots.capture import StateCapture
from lockgate.engine.state import KeyedStateSnapshot
from lockgate.engine.state.memory.versions import SnapshotVersion

__all__ = ["HeapVersions"]


class HeapVersions:
    """The versions that one checkpoint's heap snapshots hold, and the stores they came from.

    Taken before the asynchronous part reads the captures; ``release`` once it read them
    (written, failed or cancelled), or once a held snapshot is dropped (its checkpoint was
    declined or aborted). ``fold`` then merges the stores' layers a bounded step at a time,
    giving the event loop back between steps. It holds no snapshot, so the layers a fold
    drops are freed at once.
    """

    __slots__ = ("_folds", "_versions")

    def __init__(self, captures: Iterable[StateCapture]) -> None:
        heap = [c.keyed for c in captures if isinstance(c.keyed, KeyedStateSnapshot)]
        self._versions: list[SnapshotVersion] = [s.version for s in heap if s.version]
        self._folds: list[Callable[[], bool]] = []
        for snapshot in heap:
            fold = snapshot.store_fold
            if fold is not None and fold not in self._folds:
                self._folds.append(fold)

    def release(self) -> None:
        """Let the stores change what the snapshots froze (idempotent)."""
        for version in self._versions:
            version.release()

    async def fold(self) -> None:
        """Merge each store's layers, in steps; a store still held by others folds less."""
        folds, self._folds = self._folds, []
        for fold in folds:
            while fold():
                await anyio.lowlevel.checkpoint()

    def __repr__(self) -> str:
        held = sum(not version.released for version in self._versions)
        return f"<HeapVersions held={held} stores={len(self._folds)}>"
