"""Errors of the engine, one tree.

```
EngineError
├── GraphError                 the job graph is invalid; raised when it is built, before any
│                              record flows
├── JobError                   a running job failed
│   ├── OperatorError          a user function raised; names the operator uid and subtask,
│   │   │                      the user's exception is __cause__
│   │   └── KeySelectorError   a keyed operator's key selector raised (or gave an unhashable
│   │                          key) where records are sent to it
│   ├── CheckpointError        a checkpoint failed (its id and CheckpointFailureReason); raised
│   │                          by trigger_checkpoint(), and fails the job past tolerable_failures
│   ├── WorkerLost             a worker process died or stopped answering heartbeats; names it,
│   │                          its process id and its subtasks
│   └── AttemptKilled          a fault injected on purpose killed the attempt (a simulation's
│                              KillAttempt); restarted as any failed attempt is
├── ExecutorError              the job cannot run on the executor it was given (checkpoint
│                              storage the workers cannot reach, a clock they cannot share)
├── CheckpointStorageError     a checkpoint cannot be written, found or read
│   ├── CheckpointNotFound     nothing is stored at the location
│   ├── CorruptCheckpoint      a stored file does not match its size or checksum, or cannot be
│   │                          decoded; names the location
│   ├── UnsupportedCheckpointVersion  the metadata was written in a format version this
│   │                          lockgate cannot read
│   └── UnsupportedCheckpointStorage  the storage URL names a backend that is not available
├── RestoreError               a checkpoint cannot be restored into this job (names the uid),
│   │                          or a state file contradicts its metadata (names the file)
│   ├── IncompatibleState      a restored state does not fit its declaration (kind, values)
│   └── SavepointFormatError   a savepoint's bytes cannot be read as they are: damaged, a newer
│                              format version, an unregistered type, or a pickled value that
│                              was not unpickled because reading it would run code
├── SavepointEncodingError     a value has no canonical form: neither plain nor a registered
│                              type, and pickle was not allowed (also a ``TypeError``)
├── StateEncodingError         state cannot be pickled into a checkpoint; fails the job, no
│                              restart
├── SourceError                a source cannot do what was asked (bad split, bad position)
├── QueryStateError            job.query_state() cannot answer: an unknown uid or state, an
│                              operator without keyed state, or a job that is not running
├── UnknownJob                 a JobRegistry (the REST API's jobs) has no job of that name
│                              (also a ``LookupError``)
├── AsyncioRequired            a connector or storage whose client library runs on asyncio
│                              only was started on another event loop (trio); not retried
├── BarrierProtocolError       a channel broke the barrier protocol (also a ``ValueError``)
├── TransportError             the data plane between worker processes failed
│   ├── ConnectionLost         the other side is gone: a connection closed or broke while
│   │                          channels on it were open; names the peer and the edges
│   └── TransportProtocolError a peer sent what the protocol forbids (a wrong token, a frame
│                              out of sequence or beyond its credits); names the edge
└── SimulationError            a simulation cannot go on
    └── SimulationDeadlock     nothing can run, no timer is set and no thread works; names
                               the waiting tasks
```
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AsyncioRequired",
    "AttemptKilled",
    "BarrierProtocolError",
    "CheckpointError",
    "CheckpointNotFound",
    "CheckpointStorageError",
    "ConnectionLost",
    "CorruptCheckpoint",
    "EngineError",
    "ExecutorError",
    "GraphError",
    "IncompatibleState",
    "JobError",
    "KeySelectorError",
    "OperatorError",
    "QueryStateError",
    "RestoreError",
    "SavepointEncodingError",
    "SavepointFormatError",
    "SimulationDeadlock",
    "SimulationError",
    "SourceError",
    "StateEncodingError",
    "TransportError",
    "TransportProtocolError",
    "UnknownJob",
    "UnsupportedCheckpointStorage",
    "UnsupportedCheckpointVersion",
    "WorkerLost",
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


class KeySelectorError(OperatorError):
    """A keyed operator's key selector raised, or returned a key that cannot be hashed.

    Key selectors run where records are sent, in the subtasks of the operator upstream, so
    ``uid`` names the keyed operator whose selector failed and ``upstream``,
    ``subtask_index`` and ``parallelism`` the subtask that was sending; the original
    exception is ``__cause__``.
    """

    def __init__(
        self, uid: str, upstream: str, subtask_index: int, parallelism: int, error: BaseException
    ) -> None:
        JobError.__init__(
            self,
            f"the key selector of operator '{uid}' failed on a record sent by '{upstream}' "
            f"(subtask {subtask_index + 1}/{parallelism}): {error!r}; the function given to "
            "key_by() must return a key (str, bytes, int, float, bool, None or a tuple of "
            "them) for every record",
        )
        self.uid = uid
        self.upstream = upstream
        self.subtask_index = subtask_index
        self.parallelism = parallelism


class AttemptKilled(JobError):
    """A fault injected on purpose killed the running attempt, as a crashed process would.

    ``JobClient.fail_attempt`` raises it in the attempt (a simulation's ``KillAttempt``
    does); the restart strategy restores the next attempt from the latest checkpoint, as
    after any failure. Nothing is broken: the message says who killed it, and when.
    """


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


class CheckpointStorageError(EngineError):
    """Root of the errors of checkpoint storage; the message names the location."""


class CheckpointNotFound(CheckpointStorageError):
    """Nothing is stored at the location; the message names it."""


class CorruptCheckpoint(CheckpointStorageError):
    """A stored file differs from what was written: wrong size, checksum or encoding.

    Attributes:
        location: where the corrupt file is.
    """

    def __init__(self, location: str, problem: str) -> None:
        super().__init__(
            f"checkpoint file {location} is corrupt: {problem}; restore from an older "
            "checkpoint or savepoint"
        )
        self.location = location


class UnsupportedCheckpointVersion(CheckpointStorageError):
    """Checkpoint metadata was written in a format version this lockgate cannot read."""


class UnsupportedCheckpointStorage(CheckpointStorageError):
    """The storage URL names a backend that this installation does not provide."""


class RestoreError(EngineError):
    """A checkpoint or savepoint cannot be restored into this job; says what to change."""


class IncompatibleState(RestoreError):
    """Restored state does not fit how the job declares it: another kind, or unreadable values.

    The message names the operator uid and the state, and says what to change.
    """


class SourceError(EngineError):
    """A source was asked for something it cannot do."""


class QueryStateError(EngineError):
    """``job.query_state()`` cannot answer; the message says why and what to do.

    Raised for a uid the job does not have, an operator without keyed state, a state name
    the operator has not declared (the message lists those it has), a key that cannot be
    routed, and a job that is not running: restarting (query again once it runs), finished,
    failed or cancelled (its state went with its subtasks). A query whose attempt ended
    before the subtask answered raises it too. A function that raised while reading the
    state (an ``AggregateFunction.get_result``) is its ``__cause__``.
    """


class WorkerLost(JobError):
    """A worker process died or stopped answering heartbeats.

    The message names the worker, its process id, how it ended (its exit code or signal, or
    the heartbeat timeout) and the subtasks it hosted. Every worker of the attempt is torn
    down and the restart strategy decides; the next attempt restores the latest checkpoint.
    """


class ExecutorError(EngineError):
    """The job cannot run on the executor it was given; raised before it starts.

    The message says what (checkpoint storage the workers cannot reach, a clock they cannot
    share) and what to do.
    """


class UnknownJob(EngineError, LookupError):
    """A ``JobRegistry`` has no job of that name; the message lists the names it has.

    The REST API answers it with 404 and the same message.
    """


class AsyncioRequired(EngineError, RuntimeError):
    """A connector or storage whose client library runs on asyncio only ran on another loop.

    The message names the connector (its operator uid and subtask) or the storage, and the
    library. Raised when a job deploys the connector on trio, so no record flows; no restart
    helps, so the job fails at once.
    """


class StateEncodingError(EngineError):
    """An operator's state cannot be written to a checkpoint: a value cannot be pickled.

    The message names the operator uid and the value's error. The job fails without a
    restart: every attempt would hold the same kind of value, and fail the same way.
    """


class SavepointFormatError(RestoreError):
    """Savepoint bytes cannot be read; the message names the file and says what to do.

    Raised when reading a savepoint state file that is damaged or truncated, written in a
    format version this lockgate does not know, holds a type no ``TypeCodec`` is registered
    for, or carries a pickled value while pickle is not allowed (it is never unpickled then).
    """


class SavepointEncodingError(EngineError, TypeError):
    """A value cannot be written to a savepoint; the message names its type and what to do.

    Raised when writing a savepoint meets a value that is neither plain data nor of a
    registered type while pickle is not allowed; writing the state of an operator names its
    uid, the state and the key group too.
    """


class BarrierProtocolError(EngineError, ValueError):
    """A channel broke the barrier protocol, or the gate read a channel it must not read.

    Raised for a second barrier of the same checkpoint on one channel, anything after a
    channel's end of input, and channel numbers out of range. The aligner's state is left
    as it was before the offending call.
    """


class TransportError(EngineError):
    """The data plane between worker processes failed; the attempt fails and restarts."""


class ConnectionLost(TransportError):
    """A connection between two workers closed or broke while channels on it were open.

    The message names the peer and the edges still open on the connection. The executor
    turns it into the failure of the attempt; the restart strategy then decides.
    """


class TransportProtocolError(TransportError):
    """A peer sent what the data-plane protocol forbids; the message names the edge.

    Raised for a peer that offers a wrong token or protocol version, a frame out of
    sequence, data beyond the credits granted, and frames for a channel nobody opened.
    """


class SimulationError(EngineError):
    """A simulation on virtual time cannot go on; the message says why and what to do."""


class SimulationDeadlock(SimulationError):
    """Nothing can run, no timer is set and no thread works: virtual time cannot move on.

    The message gives the virtual time and names every waiting task with the line it waits
    at, so the wait nothing will ever end (a model that never returns, an event nobody
    sets) can be found.
    """
