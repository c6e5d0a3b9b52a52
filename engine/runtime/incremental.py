"""IncrementalBases: what each operator's next incremental checkpoint may build on."""

from __future__ import annotations

from dataclasses import dataclass

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.runtime.completed_bases import CompletedBases
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
