"""A job's lifecycle events and failures: what ``job.events()`` yields and ``job.failures`` holds.

Every event is a frozen dataclass naming its job and the time of day it happened on the
job's clock (``time.time()`` seconds on the ``SystemClock``, see ``wall_time_of``). Each
also says how it is logged: ``level``, ``message()`` and the structured ``log_fields()`` a
log record of it carries in ``extra``. ``JobEvents`` is the one place that logs them and
hands them to subscribers.

Log record fields (``extra=``): ``event`` (the event's class name) and ``job`` on every record;
``attempt`` (counted from 0) on attempt events; ``checkpoint_id`` on checkpoint and restore
events, with ``location`` where the snapshot is and ``reason`` (a ``CheckpointFailureReason``
name) when one failed; ``delay`` (seconds) before a restart; ``uid`` and ``subtask`` (counted
from 0) when an operator's function caused a failure.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from lockgate.engine.checkpointing.messages import CheckpointFailureReason
from lockgate.engine.errors import OperatorError

__all__ = [
    "CheckpointCompleted",
    "CheckpointFailed",
    "EventsDropped",
    "JobCanceled",
    "JobEvent",
    "JobFailed",
    "JobFailure",
    "JobFinished",
    "JobRestarting",
    "JobStarted",
    "RestoredFromCheckpoint",
]

# A checkpoint aborted for these says something went wrong (a warning); the others are the
# ordinary course of a job: subsumed, overtaken by a newer barrier, or ended with the attempt.
_WARNED = frozenset(
    {
        CheckpointFailureReason.TIMEOUT,
        CheckpointFailureReason.DECLINED,
        CheckpointFailureReason.STORAGE_FAILED,
        CheckpointFailureReason.UNENCODABLE_STATE,
    }
)


@dataclass(frozen=True, slots=True)
class JobFailure:
    """One failed attempt of a job: which attempt (from 0), when, and the exception.

    ``time`` is the time of day on the job's clock: wall-clock seconds since the epoch on
    the ``SystemClock``, the clock's ``now()`` on any other (``wall_time_of``).
    ``job.failures`` lists one per failed attempt, oldest first, including the failure that
    ended the job.
    """

    attempt: int
    time: float
    exception: BaseException


@dataclass(frozen=True, slots=True)
class JobEvent:
    """A step in a job's life: which job, and when (the time of day on the job's clock).

    Every event of ``job.events()`` is one of its subclasses; the last one of a job is
    ``JobFinished``, ``JobFailed`` or ``JobCanceled`` (``is_terminal``).
    """

    job: str
    time: float

    @property
    def level(self) -> int:
        """The ``logging`` level of the event's log record."""
        return logging.INFO

    @property
    def is_terminal(self) -> bool:
        """Whether this event ends the job (no event follows it)."""
        return False

    @property
    def error(self) -> BaseException | None:
        """The exception the log record carries as ``exc_info``, if any."""
        return None

    def message(self) -> str:
        """The event in words, as its log record says it."""
        return f"job '{self.job}': {type(self).__name__}"

    def log_fields(self) -> dict[str, Any]:
        """The structured fields of its log record (``extra=``)."""
        return {"event": type(self).__name__, "job": self.job}


@dataclass(frozen=True, slots=True)
class JobStarted(JobEvent):
    """An attempt of the job starts: attempt 0 first, then one per restart.

    The job's status is ``RUNNING`` from here on, until it restarts or ends; as in Flink,
    that includes the attempt's restore (``RestoredFromCheckpoint`` follows) and the
    deployment of its subtasks.
    """

    attempt: int

    def message(self) -> str:
        """Say which attempt started."""
        return f"job '{self.job}' attempt {self.attempt} started"

    def log_fields(self) -> dict[str, Any]:
        """The job, the event and the attempt."""
        return {**JobEvent.log_fields(self), "attempt": self.attempt}


@dataclass(frozen=True, slots=True)
class RestoredFromCheckpoint(JobEvent):
    """An attempt starts from checkpoint (or savepoint) ``checkpoint_id`` stored at ``location``.

    Sent after the attempt's ``JobStarted``, once its state is loaded and before its
    subtasks run; ``location`` is empty for a snapshot given as metadata.
    """

    attempt: int
    checkpoint_id: int
    location: str
    is_savepoint: bool

    def message(self) -> str:
        """Say what the attempt restores, and from where."""
        kind = "savepoint" if self.is_savepoint else "checkpoint"
        where = f" at {self.location}" if self.location else ""
        return (
            f"job '{self.job}' attempt {self.attempt} restores {kind} {self.checkpoint_id}{where}"
        )

    def log_fields(self) -> dict[str, Any]:
        """The attempt, the checkpoint id and the location."""
        return {
            **JobEvent.log_fields(self),
            "attempt": self.attempt,
            "checkpoint_id": self.checkpoint_id,
            "location": self.location,
        }


@dataclass(frozen=True, slots=True)
class CheckpointCompleted(JobEvent):
    """Checkpoint (or savepoint) ``checkpoint_id`` completed: its metadata is at ``location``.

    ``duration`` runs from its trigger to its completion, in seconds on the job's clock;
    ``state_size`` is in bytes.
    """

    checkpoint_id: int
    location: str
    is_savepoint: bool
    duration: float
    state_size: int

    def message(self) -> str:
        """Say which checkpoint completed, where and how large."""
        kind = "savepoint" if self.is_savepoint else "checkpoint"
        return (
            f"job '{self.job}' completed {kind} {self.checkpoint_id} at {self.location} "
            f"({self.state_size} bytes in {self.duration:.3f} s)"
        )

    def log_fields(self) -> dict[str, Any]:
        """The checkpoint id and its location."""
        fields = {"checkpoint_id": self.checkpoint_id, "location": self.location}
        return {**JobEvent.log_fields(self), **fields}


@dataclass(frozen=True, slots=True)
class CheckpointFailed(JobEvent):
    """Checkpoint (or savepoint) ``checkpoint_id`` was aborted for ``reason``; the job goes on.

    ``message`` says more where there is more to say (which subtask declined it, the
    storage's error). Logged as a warning for a timeout, a decline, a storage failure or
    state that cannot be encoded; a checkpoint subsumed, overtaken by a newer barrier or
    ended with its attempt is logged at INFO. Too many failures in a row fail the attempt
    (``tolerable_failures``), which then restarts.
    """

    checkpoint_id: int
    reason: CheckpointFailureReason
    detail: str
    is_savepoint: bool

    @property
    def level(self) -> int:
        """WARNING when something went wrong, INFO for the ordinary course of a job."""
        return logging.WARNING if self.reason in _WARNED else logging.INFO

    def message(self) -> str:
        """Say which checkpoint failed and why."""
        kind = "savepoint" if self.is_savepoint else "checkpoint"
        detail = f": {self.detail}" if self.detail else ""
        return (
            f"job '{self.job}' {kind} {self.checkpoint_id} failed ({self.reason.name}): "
            f"{self.reason.value}{detail}"
        )

    def log_fields(self) -> dict[str, Any]:
        """The checkpoint id and the reason's name."""
        fields = {"checkpoint_id": self.checkpoint_id, "reason": self.reason.name}
        return {**JobEvent.log_fields(self), **fields}


@dataclass(frozen=True, slots=True)
class JobRestarting(JobEvent):
    """Attempt ``attempt`` failed with ``cause``; the next one starts in ``delay`` seconds.

    The job's status is ``RESTARTING`` until the next attempt runs; the failure is in
    ``job.failures`` already. Logged as a warning, with the cause as ``exc_info``.
    """

    attempt: int
    cause: BaseException
    delay: float

    @property
    def level(self) -> int:
        """A restart is a retry: WARNING."""
        return logging.WARNING

    @property
    def error(self) -> BaseException:
        """The failure that caused the restart."""
        return self.cause

    def message(self) -> str:
        """Say which attempt failed, why, and when the next starts."""
        return (
            f"job '{self.job}' attempt {self.attempt} failed; restarting in "
            f"{self.delay:.3f} s: {self.cause}"
        )

    def log_fields(self) -> dict[str, Any]:
        """The attempt, the delay, and the operator that failed (if a function raised)."""
        fields = {"attempt": self.attempt, "delay": self.delay}
        return {**JobEvent.log_fields(self), **fields, **_operator_fields(self.cause)}


@dataclass(frozen=True, slots=True)
class JobFinished(JobEvent):
    """The job finished: the last event of a job that ended as it should.

    Every input ended and the final checkpoint committed, or it stopped with a savepoint.
    """

    attempt: int

    @property
    def is_terminal(self) -> bool:
        """The job has ended."""
        return True

    def message(self) -> str:
        """Say that the job finished."""
        return f"job '{self.job}' finished (attempt {self.attempt})"

    def log_fields(self) -> dict[str, Any]:
        """The job, the event and the last attempt."""
        return {**JobEvent.log_fields(self), "attempt": self.attempt}


@dataclass(frozen=True, slots=True)
class JobCanceled(JobEvent):
    """The job was cancelled: the last event of a job that was stopped before its end.

    ``job.cancel()`` was called, or the ``start`` block was left while the job ran.
    """

    attempt: int

    @property
    def is_terminal(self) -> bool:
        """The job has ended."""
        return True

    def message(self) -> str:
        """Say that the job was cancelled."""
        return f"job '{self.job}' was cancelled (attempt {self.attempt})"

    def log_fields(self) -> dict[str, Any]:
        """The job, the event and the last attempt."""
        return {**JobEvent.log_fields(self), "attempt": self.attempt}


@dataclass(frozen=True, slots=True)
class JobFailed(JobEvent):
    """The job failed for good with ``failure``: the last event of a failed job.

    No restart is left, or the failure is one a restart cannot mend (a restore or encoding
    error). Logged at ERROR, with the failure as ``exc_info``.
    """

    attempt: int
    failure: BaseException

    @property
    def level(self) -> int:
        """A failure: ERROR."""
        return logging.ERROR

    @property
    def is_terminal(self) -> bool:
        """The job has ended."""
        return True

    @property
    def error(self) -> BaseException:
        """The failure that ended the job."""
        return self.failure

    def message(self) -> str:
        """Say that the job failed, and why."""
        return f"job '{self.job}' failed (attempt {self.attempt}): {self.failure}"

    def log_fields(self) -> dict[str, Any]:
        """The attempt, and the operator that failed (if a function raised)."""
        fields = {"attempt": self.attempt, **_operator_fields(self.failure)}
        return {**JobEvent.log_fields(self), **fields}


@dataclass(frozen=True, slots=True)
class EventsDropped(JobEvent):
    """``count`` events were dropped here because this subscriber did not keep up.

    Only a subscription yields it, in the place of the events it lost (the first of them
    happened at ``time``); it is never logged. The events after it follow in order.
    """

    count: int

    def message(self) -> str:
        """Say how many events were lost."""
        return f"job '{self.job}': {self.count} events dropped; the subscriber fell behind"


def _operator_fields(error: BaseException) -> dict[str, Any]:
    if isinstance(error, OperatorError):
        return {"uid": error.uid, "subtask": error.subtask_index}
    return {}
