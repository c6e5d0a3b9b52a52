"""Errors of the engine.

```
EngineError
├── GraphError            the job graph is invalid; raised when it is built, before any record flows
├── JobError              a running job failed
│   └── OperatorError     a user function raised; names the operator uid and subtask,
│                         the user's exception is __cause__
└── SourceError           a source cannot do what was asked (bad split, bad position)
```
"""

from __future__ import annotations

__all__ = ["EngineError", "GraphError", "JobError", "OperatorError", "SourceError"]


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


class SourceError(EngineError):
    """A source was asked for something it cannot do."""
