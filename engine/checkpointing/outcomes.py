"""CheckpointOutcomeListener: who hears how each checkpoint and savepoint ended."""

from __future__ import annotations

from typing import Protocol

from lockgate.engine.checkpointing.completed import CompletedCheckpoint
from lockgate.engine.checkpointing.statistics import CheckpointRecord
from lockgate.engine.events import SnapshotKind

__all__ = ["CheckpointOutcomeListener", "IgnoreOutcomes"]


class CheckpointOutcomeListener(Protocol):
    """Told by the checkpoint coordinator of every snapshot it completed or aborted.

    Called on the coordinator's task, once per snapshot, after the statistics have it; an
    implementation must neither block nor raise (the job master's turns each call into a
    lifecycle event and a log record).
    """

    def checkpoint_completed(self, completed: CompletedCheckpoint, kind: SnapshotKind) -> None:
        """``completed`` (a checkpoint or savepoint of ``kind``) has its metadata written."""

    def checkpoint_aborted(self, record: CheckpointRecord, kind: SnapshotKind) -> None:
        """The snapshot ``record`` describes was aborted; ``record.failure_reason`` says why."""


class IgnoreOutcomes:
    """A listener that hears every outcome and does nothing; the coordinator's default.

    For coordinators built without a job master, as in the coordinator's own tests.
    """

    def checkpoint_completed(self, completed: CompletedCheckpoint, kind: SnapshotKind) -> None:
        """Do nothing."""

    def checkpoint_aborted(self, record: CheckpointRecord, kind: SnapshotKind) -> None:
        """Do nothing."""
