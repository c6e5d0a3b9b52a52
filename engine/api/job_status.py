"""JobStatus: the lifecycle of a job, with its one transition table."""

from __future__ import annotations

import enum

from lockgate.actors import IllegalStateTransition

__all__ = ["JobStatus"]


class JobStatus(enum.Enum):
    """Where a job is in its life.

    ``CREATED`` until its first attempt starts; ``RUNNING`` while an attempt runs (from its
    restore on, and for a bounded job through its final checkpoint); ``RESTARTING`` from an
    attempt's failure until the next attempt starts (the failure is in ``job.failures``
    already); ``FINISHING`` once its end was asked for (``cancel()``, or a stop-with-savepoint
    whose savepoint completed) while its subtasks stop; then ``FINISHED``, ``CANCELED`` or
    ``FAILED`` for good.
    ``advance`` allows only the edges of the transition table in this module and raises
    ``IllegalStateTransition`` naming both states otherwise.
    """

    CREATED = "created"
    RUNNING = "running"
    RESTARTING = "restarting"
    FINISHING = "finishing"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELED = "canceled"

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
    # its first attempt starts / cancelled / failed for good
    JobStatus.CREATED: frozenset({JobStatus.RUNNING, JobStatus.FINISHING, JobStatus.FAILED}),
    # an attempt failed / asked to end / inputs ended and committed / failed for good
    JobStatus.RUNNING: frozenset(
        {JobStatus.RESTARTING, JobStatus.FINISHING, JobStatus.FINISHED, JobStatus.FAILED}
    ),
    # the next attempt starts / cancelled / failed for good
    JobStatus.RESTARTING: frozenset({JobStatus.RUNNING, JobStatus.FINISHING, JobStatus.FAILED}),
    # a stopping attempt failed and restarts / ended as asked / cancelled / failed for good
    JobStatus.FINISHING: frozenset(
        {JobStatus.RESTARTING, JobStatus.FINISHED, JobStatus.CANCELED, JobStatus.FAILED}
    ),
    JobStatus.FINISHED: frozenset(),
    JobStatus.FAILED: frozenset(),
    JobStatus.CANCELED: frozenset(),
}
