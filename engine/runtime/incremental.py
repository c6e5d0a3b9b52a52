"""IncrementalBases: what each operator's next incremental checkpoint may build on."""

from __future__ import annotations

from dataclasses import dataclass

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.state import KeyedStateSnapshot

__all__ = ["FULL_SNAPSHOT_EVERY", "Increment", "IncrementalBases"]

FULL_SNAPSHOT_EVERY = 20
"""Incremental chains hold at most this many files: a full snapshot and its deltas."""


@dataclass(frozen=True, slots=True)
class Increment:
    """The keyed snapshot written for one checkpoint, and the handle of the file written."""

    keyed: KeyedStateSnapshot
    handle: StateHandle

    def chain(self) -> tuple[StateHandle, ...]:
        """The files a delta on top of this one builds on: this one's, then this one."""
        return (*self.handle.shared, self.handle.plain())


class IncrementalBases:
    """Per operator uid, the keyed snapshot of the last *completed* checkpoint.

    A delta must build only on what a completed checkpoint wrote: a pending checkpoint may
    still be aborted and its files deleted. So what a checkpoint wrote becomes a base only
    on its notify-complete. A chain holds at most ``full_every`` files (one full snapshot and
    its deltas); then the next snapshot is a full one again, which bounds restore time.
    An operator with no base (a new or restored job) writes a full snapshot first, so a job
    never builds on files of a snapshot it restored from and does not own.
    """

    def __init__(self, full_every: int = FULL_SNAPSHOT_EVERY) -> None:
        if full_every < 1:
            raise ValueError(f"full_every must be at least 1; got {full_every}")
        self.full_every = full_every
        self._bases: dict[str, Increment] = {}
        self._pending: dict[int, dict[str, Increment]] = {}

    def base_for(self, uid: str) -> Increment | None:
        """The snapshot a delta of ``uid`` may build on now, or ``None`` for a full one."""
        base = self._bases.get(uid)
        if base is None or len(base.chain()) + 1 > self.full_every:
            return None
        return base

    def written(self, checkpoint_id: int, uid: str, increment: Increment) -> None:
        """Record what ``uid`` wrote for ``checkpoint_id``, a base once it completes."""
        self._pending.setdefault(checkpoint_id, {})[uid] = increment

    def completed(self, checkpoint_id: int) -> None:
        """Make what ``checkpoint_id`` wrote the bases; forget older pending snapshots."""
        written = self._pending.pop(checkpoint_id, None)
        for older in [cid for cid in self._pending if cid < checkpoint_id]:
            del self._pending[older]
        if written is not None:
            self._bases = written

    def aborted(self, checkpoint_id: int) -> None:
        """Forget what ``checkpoint_id`` wrote: its files are deleted."""
        self._pending.pop(checkpoint_id, None)

    def __repr__(self) -> str:
        return f"<IncrementalBases bases={sorted(self._bases)} pending={sorted(self._pending)}>"
