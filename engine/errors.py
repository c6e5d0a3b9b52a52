"""Errors of the engine.

```
EngineError
├── GraphError            the job graph is invalid; raised when it is built, before any record flows
├── JobError              a running job failed
│   ├── OperatorError     a user function raised; names the operator uid and subtask,
│   │                     the user's exception is __cause__
│   └── CheckpointError   a checkpoint failed (its id and CheckpointFailureReason); raised by
│                         trigger_checkpoint(), and fails the job past tolerable_failures
├── RestoreError          a checkpoint cannot be restored into this job (names the uid)
│   ├── IncompatibleState a restored state does not fit its declaration (kind, values)
│   └── SavepointFormatError  a savepoint file is malformed, too new, or carries a pickle
│                         (lockgate.engine.savepoints.errors)
├── SavepointEncodingError  a value cannot be written to a savepoint (register its type)
├── StateEncodingError    state cannot be pickled into a checkpoint; fails the job, no restart
└── SourceError           a source cannot do what was asked (bad split, bad position)
```
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CheckpointError",
    "EngineError",
    "GraphError",
    "IncompatibleState",
    "JobError",
    "OperatorError",
    "RestoreError",
    "SourceError",
    "StateEncodingError",
]


class EngineError(Exception):
    """Root of every error raised by lockgate.engine."""


class GraphError(EngineError):
    """The job graph is invalid; the message names the operator uid and says what to do."""


class JobError(EngineError):
    """A job attempt failed."""


class OperatorError(JobError):
    """A user function raised while a subtask ran it; the original exception is ``__cause__``.

    Attributes:
        uid: the operator whose function raised.
        subtask_index: which parallel instance, counted from 0.
        parallelism: how many parallel instances the operator has.
    """

    def __init__(
        self, uid: str, subtask_index: int, parallelism: int, error: BaseException
    ) -> None:
        super().__init__(
            f"operator '{uid}' (subtask {subtask_index + 1}/{parallelism}) failed: {error!r}"
        )
        self.uid = uid
        self.subtask_index = subtask_index
        self.parallelism = parallelism


class CheckpointError(JobError):
    """A checkpoint did not complete.

    Attributes:
        checkpoint_id: the checkpoint that failed.
        reason: a ``CheckpointFailureReason``.
    """

    def __init__(
        self,
        checkpoint_id: int,
        reason: Any,
        error: BaseException | None = None,
        *,
        message: str | None = None,
    ) -> None:
        detail = message or f"{reason.value}" + (f": {error!r}" if error else "")
        super().__init__(f"checkpoint {checkpoint_id} failed: {detail}")
        self.checkpoint_id = checkpoint_id
        self.reason = reason
        if error is not None:
            self.__cause__ = error


class RestoreError(EngineError):
    """A checkpoint or savepoint cannot be restored into this job; says what to change."""


class IncompatibleState(RestoreError):
    """Restored state does not fit how the job declares it: another kind, or unreadable values.

    The message names the operator uid and the state, and says what to change.
    """


class SourceError(EngineError):
    """A source was asked for something it cannot do."""


class StateEncodingError(EngineError):
    """An operator's state cannot be written to a checkpoint: a value cannot be pickled.

    The message names the operator uid and the value's error. The job fails without a
    restart: every attempt would hold the same kind of value, and fail the same way.
    """
