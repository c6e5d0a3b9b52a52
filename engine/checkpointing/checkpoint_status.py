"""CheckpointStatus: the lifecycle of one checkpoint, with its one transition table."""

from __future__ import annotations

import enum

from lockgate.actors import IllegalStateTransition

__all__ = ["CheckpointStatus"]


class CheckpointStatus(enum.Enum):
    """Where a checkpoint is in its life; ``advance`` allows only the edges of the table below.

    A checkpoint starts ``PENDING`` and ends once, either ``COMPLETED`` (every subtask
    acknowledged and the metadata is written) or ``ABORTED``.
    """

    PENDING = "pending"
    COMPLETED = "completed"
    ABORTED = "aborted"

    @property
    def is_terminal(self) -> bool:
        """Whether the checkpoint has ended for good."""
        return not _TRANSITIONS[self]

    def advance(
        self, target: CheckpointStatus, *, lifecycle: str = "checkpoint"
    ) -> CheckpointStatus:
        """Return ``target`` if the table allows moving there, else raise naming both states."""
        if target not in _TRANSITIONS[self]:
            raise IllegalStateTransition(lifecycle, self, target)
        return target


_TRANSITIONS: dict[CheckpointStatus, frozenset[CheckpointStatus]] = {
    CheckpointStatus.PENDING: frozenset({CheckpointStatus.COMPLETED, CheckpointStatus.ABORTED}),
    CheckpointStatus.COMPLETED: frozenset(),
    CheckpointStatus.ABORTED: frozenset(),
}
