"""JobStatus: the lifecycle of a job, with its one transition table."""

from __future__ import annotations

import enum

from lockgate.actors import IllegalStateTransition

__all__ = ["JobStatus"]


class JobStatus(enum.Enum):
    """Where a job is in its life.

    ``advance`` allows only the edges of the transition table in this module and raises
    ``IllegalStateTransition`` naming both states otherwise.
    """

    CREATED = "created"
    RUNNING = "running"
    CANCELLING = "cancelling"
    FINISHED = "finished"
    CANCELED = "canceled"
    FAILED = "failed"

    @property
    def is_terminal(self) -> bool:
        """Whether the job has ended for good."""
        return not _TRANSITIONS[self]

    def advance(self, target: JobStatus) -> JobStatus:
        """Return ``target`` if the table allows moving there, else raise."""
        if target not in _TRANSITIONS[self]:
            raise IllegalStateTransition("job", self, target)
        return target


_TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    JobStatus.CREATED: frozenset({JobStatus.RUNNING, JobStatus.CANCELLING, JobStatus.FAILED}),
    JobStatus.RUNNING: frozenset({JobStatus.FINISHED, JobStatus.CANCELLING, JobStatus.FAILED}),
    JobStatus.CANCELLING: frozenset({JobStatus.CANCELED, JobStatus.FAILED, JobStatus.FINISHED}),
    JobStatus.FINISHED: frozenset(),
    JobStatus.CANCELED: frozenset(),
    JobStatus.FAILED: frozenset(),
}
