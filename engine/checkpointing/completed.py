"""Completed checkpoints and the store that retains the newest of them."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from lockgate.engine.checkpointing.checkpoint_status import CheckpointStatus
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.checkpointing.statistics import CheckpointRecord

__all__ = ["CompletedCheckpoint", "CompletedCheckpointStore"]


@dataclass(frozen=True, slots=True)
class CompletedCheckpoint:
    """A checkpoint whose metadata is written: it can be restored from ``location``.

    Times are on the engine clock, in seconds; ``completion_time >= trigger_time``.
    ``statistics`` is the record of how the checkpoint went, when it was taken by a
    ``PendingCheckpoint``. ``claimed`` marks a snapshot the job restored from in claim mode:
    it lives outside the job's checkpoint storage, and the job deletes its folder once a
    newer checkpoint subsumes it.
    """

    checkpoint_id: int
    trigger_time: float
    completion_time: float
    location: str
    metadata: CheckpointMetadata
    statistics: CheckpointRecord | None = None
    claimed: bool = False

    @property
    def duration(self) -> float:
        """Seconds from the trigger to the completion."""
        return self.completion_time - self.trigger_time

    def record(self) -> CheckpointRecord:
        """Return the record of how the checkpoint went (a bare one if none was taken)."""
        return self.statistics or CheckpointRecord(
            checkpoint_id=self.checkpoint_id,
            status=CheckpointStatus.COMPLETED,
            trigger_time=self.trigger_time,
            duration=self.duration,
            state_size=self.metadata.state_size,
            acknowledged=0,
            total=0,
        )


class CompletedCheckpointStore:
    """The newest ``max_retained`` completed checkpoints, ordered by checkpoint id.

    ``add`` returns the checkpoints it no longer retains (subsumed), which the caller
    discards from storage; the store itself does no I/O.
    """

    def __init__(self, max_retained: int = 1) -> None:
        if max_retained < 1:
            raise ValueError(f"max_retained must be at least 1; got {max_retained}")
        self._max_retained = max_retained
        self._checkpoints: list[CompletedCheckpoint] = []

    @property
    def max_retained(self) -> int:
        """How many completed checkpoints are kept."""
        return self._max_retained

    @property
    def latest(self) -> CompletedCheckpoint | None:
        """The completed checkpoint with the highest id, or ``None`` while there is none."""
        return self._checkpoints[-1] if self._checkpoints else None

    @property
    def all(self) -> list[CompletedCheckpoint]:
        """The retained checkpoints, oldest first."""
        return list(self._checkpoints)

    def add(self, completed: CompletedCheckpoint) -> list[CompletedCheckpoint]:
        """Retain ``completed``; return the checkpoints subsumed by it, oldest first.

        Raises:
            ValueError: when a checkpoint with the same id is already retained.
        """
        ids = [checkpoint.checkpoint_id for checkpoint in self._checkpoints]
        if completed.checkpoint_id in ids:
            raise ValueError(f"checkpoint {completed.checkpoint_id} was already added")
        self._checkpoints.insert(bisect.bisect(ids, completed.checkpoint_id), completed)
        excess = max(0, len(self._checkpoints) - self._max_retained)
        subsumed = self._checkpoints[:excess]
        del self._checkpoints[:excess]
        return subsumed

    def recover(self, checkpoints: list[CompletedCheckpoint]) -> None:
        """Retain checkpoints an earlier run left, all of them, before this run adds any.

        More than ``max_retained`` may be retained for a while: the next ``add`` subsumes
        the excess, oldest first, just as retention would have if the run that took them
        had gone on.

        Raises:
            ValueError: when the store already holds a checkpoint.
        """
        if self._checkpoints:
            raise ValueError(f"only an empty store recovers checkpoints; it holds {self!r}")
        self._checkpoints = sorted(checkpoints, key=lambda checkpoint: checkpoint.checkpoint_id)

    def __len__(self) -> int:
        return len(self._checkpoints)

    def __repr__(self) -> str:
        ids = [checkpoint.checkpoint_id for checkpoint in self._checkpoints]
        return f"CompletedCheckpointStore(max_retained={self._max_retained}, retained={ids})"
