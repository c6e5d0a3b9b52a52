"""The control protocol between the driving process and a worker process.

One connection per worker carries, in order, everything but records: the deployment, the
checkpoint protocol's messages both ways (wrapped as ``ToSubtask`` and ``ToCoordinator``),
heartbeats with the subtasks' metrics, failures, and calls to ``DriverSide`` objects.

Driver -> worker: ``Deploy``, ``Connect``, ``Start``, ``ToSubtask``, ``DriverReply``, ``Shutdown``.
Worker -> driver: ``Hello``, ``Listening``, ``Deployed``, ``ToCoordinator``, ``Heartbeat``,
``AttemptFailed``, ``WorkerFinished``, ``DriverCall``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lockgate.engine.checkpointing.messages import SubtaskId
from lockgate.engine.runtime.metrics.counters import SubtaskCounters

__all__ = [
    "AttemptFailed",
    "Deploy",
    "Deployed",
    "DriverCall",
    "DriverReply",
    "Connect",
    "Heartbeat",
    "Hello",
    "Listening",
    "Shutdown",
    "Start",
    "ToCoordinator",
    "ToSubtask",
    "WorkerFinished",
]


@dataclass(frozen=True, slots=True)
class Hello:
    """Worker -> driver, first on each of its two connections: who, and which connection.

    ``channel`` is ``"control"`` (everything but blocking calls) or ``"calls"`` (the
    ``DriverCall`` a worker blocks on, and their ``DriverReply``, one at a time).
    """

    worker: int
    pid: int
    channel: str = "control"


@dataclass(frozen=True, slots=True)
class Deploy:
    """Driver -> worker: build and start these subtasks of the attempt.

    ``payload`` is the shipped ``WorkerDeployment`` (``shipping.ship``); ``sys_path`` is the
    driving process's import path, set before it is unpickled, so that user modules import.
    ``addresses`` says where each worker's data plane listens, and ``token`` is the secret
    the workers of this attempt show each other there.
    """

    payload: bytes
    sys_path: tuple[str, ...]
    addresses: tuple[str, ...] = ()
    token: bytes = b""


@dataclass(frozen=True, slots=True)
class Listening:
    """Worker -> driver: my data plane listens; peers may connect once all say so."""


@dataclass(frozen=True, slots=True)
class Connect:
    """Driver -> worker: every worker listens; connect to your peers with lower numbers."""


@dataclass(frozen=True, slots=True)
class Deployed:
    """Worker -> driver: every subtask is built; they run once ``Start`` comes."""


@dataclass(frozen=True, slots=True)
class Start:
    """Driver -> worker: run the subtasks built (the coordinator knows them now)."""


@dataclass(frozen=True, slots=True)
class ToSubtask:
    """Driver -> worker: a control message for one of the worker's subtasks."""

    subtask: SubtaskId
    message: Any


@dataclass(frozen=True, slots=True)
class ToCoordinator:
    """Worker -> driver: a control message a subtask told the checkpoint coordinator."""

    message: Any


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Worker -> driver, every heartbeat interval: alive, and its subtasks' metrics now."""

    metrics: tuple[SubtaskCounters, ...] = ()


@dataclass(frozen=True, slots=True)
class AttemptFailed:
    """Worker -> driver: building or running the attempt failed.

    ``actor`` names the subtask that failed (empty when the deployment failed), ``error``
    is its exception (or a ``JobError`` describing one that could not be pickled).
    """

    actor: str
    error: BaseException


@dataclass(frozen=True, slots=True)
class WorkerFinished:
    """Worker -> driver: every subtask of the worker stopped; the worker exits."""


@dataclass(frozen=True, slots=True)
class Shutdown:
    """Driver -> worker: cancel every subtask and exit."""


@dataclass(frozen=True, slots=True)
class DriverCall:
    """Worker -> driver: run ``method`` on ``DriverSide`` object ``target``.

    ``call_id`` is ``None`` for a call told (no reply); otherwise a ``DriverReply`` with it
    answers.
    """

    call_id: int | None
    target: int
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DriverReply:
    """Driver -> worker: what ``DriverCall`` ``call_id`` returned, or raised."""

    call_id: int
    value: Any = None
    error: BaseException | None = None
