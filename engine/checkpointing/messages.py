"""Checkpoint protocol messages between the coordinator and subtasks (control plane).

They travel on control inboxes, never on data channels; only ``CheckpointBarrier`` (in
``lockgate.engine.events``) travels in-band.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lockgate.actors import ActorRef
from lockgate.engine.events import CHECKPOINT, SnapshotOptions

__all__ = [
    "AcknowledgeCheckpoint",
    "AttemptDeployed",
    "CheckpointCommitted",
    "CheckpointFailureReason",
    "DeclineCheckpoint",
    "EndSourceInput",
    "NotifyCheckpointAborted",
    "NotifyCheckpointComplete",
    "StateHandle",
    "SubtaskCheckpointStats",
    "SubtaskFinished",
    "SubtaskId",
    "SubtaskInputEnded",
    "TriggerCheckpoint",
]


@dataclass(frozen=True, slots=True, order=True)
class SubtaskId:
    """One subtask of one chain of the running plan."""

    chain_id: int
    subtask_index: int

    def __str__(self) -> str:
        return f"{self.chain_id}/{self.subtask_index}"


class CheckpointFailureReason(enum.Enum):
    """Why a checkpoint did not complete.

    Timeouts, declines and storage failures count towards ``tolerable_failures``; a
    checkpoint subsumed by a newer one, aborted by a newer barrier or ended with the job does
    not.
    """

    TIMEOUT = "the checkpoint expired before every subtask acknowledged it"
    DECLINED = "a subtask declined the checkpoint"
    SUBTASK_FAILED = "a subtask failed while the checkpoint was pending"
    STORAGE_FAILED = "the checkpoint could not be written to its storage"
    UNENCODABLE_STATE = "a subtask holds state the savepoint format cannot encode"
    SUBSUMED = "a newer checkpoint completed first"
    ALIGNMENT_ABORTED = "a newer barrier arrived before alignment finished"
    JOB_ENDED = "the job's attempt ended (it failed, restarted, stopped or was cancelled) first"


@dataclass(frozen=True, slots=True)
class StateHandle:
    """Where a subtask wrote one piece of a checkpoint: location, size and checksum.

    ``is_shared`` marks a file in the job's shared folder, which belongs to no single
    checkpoint: incremental snapshots of later checkpoints may build on it. ``shared`` lists
    the shared files an incremental snapshot reads besides its own: those a memory delta
    builds on, oldest first, or every SST file a RocksDB-native snapshot uses. A registry
    counts the retained checkpoints referencing each shared file and deletes it once none is
    left.
    """

    location: str
    size: int
    checksum: str
    shared: tuple[StateHandle, ...] = ()
    is_shared: bool = False

    @property
    def shared_files(self) -> tuple[StateHandle, ...]:
        """The shared files this state reads: those it builds on, then its own if shared."""
        own = (self.plain(),) if self.is_shared else ()
        return (*self.shared, *own)

    def plain(self) -> StateHandle:
        """This handle without the files it builds on."""
        if not self.shared:
            return self
        return StateHandle(self.location, self.size, self.checksum, is_shared=self.is_shared)


@dataclass(frozen=True, slots=True)
class SubtaskCheckpointStats:
    """How one subtask took part in one checkpoint, in seconds and bytes.

    ``start_delay`` runs from the trigger to the first barrier (or trigger) this subtask
    saw; ``alignment_duration`` from that first barrier to the snapshot (the last barrier
    when aligned; 0, or the aligned timeout, when unaligned); ``sync_duration`` is the copy
    taken on the event loop; ``async_duration`` the encoding and writing done off it.
    ``unaligned`` says whether the snapshot was unaligned, and ``persisted_in_flight`` how
    many bytes of in-flight records (channel state) it stored, out of ``state_size``.
    """

    start_delay: float = 0.0
    alignment_duration: float = 0.0
    sync_duration: float = 0.0
    async_duration: float = 0.0
    state_size: int = 0
    persisted_in_flight: int = 0
    unaligned: bool = False


@dataclass(frozen=True, slots=True)
class TriggerCheckpoint:
    """Coordinator -> subtask: snapshot now and emit ``CheckpointBarrier(checkpoint_id)``.

    Sent to source subtasks, and to subtasks whose every input has ended (no barrier can
    reach them through a channel any more). A subtask ignores a trigger for a checkpoint it
    has already snapshotted.
    """

    checkpoint_id: int
    timestamp: float
    options: SnapshotOptions = CHECKPOINT


@dataclass(frozen=True, slots=True)
class EndSourceInput:
    """Coordinator -> source subtask: end your input now (stop-with-savepoint with drain).

    The source emits ``EndOfInput`` as if it had read everything: downstream operators fire
    and flush what they hold, and the job's final snapshot follows.
    """


@dataclass(frozen=True, slots=True)
class AcknowledgeCheckpoint:
    """Subtask -> coordinator: my state for the checkpoint is written; here are its handles.

    ``handles`` maps each operator uid of the subtask's chain to the handle of its state
    (operators without state are absent).
    """

    checkpoint_id: int
    subtask: SubtaskId
    handles: dict[str, StateHandle] = field(default_factory=dict)
    stats: SubtaskCheckpointStats = field(default_factory=SubtaskCheckpointStats)


@dataclass(frozen=True, slots=True)
class DeclineCheckpoint:
    """Subtask -> coordinator: I cannot take part in this checkpoint."""

    checkpoint_id: int
    subtask: SubtaskId
    reason: CheckpointFailureReason
    message: str = ""


@dataclass(frozen=True, slots=True)
class NotifyCheckpointComplete:
    """Coordinator -> subtask: the checkpoint is complete; commit what you pre-committed."""

    checkpoint_id: int


@dataclass(frozen=True, slots=True)
class CheckpointCommitted:
    """Subtask -> coordinator: I handled ``NotifyCheckpointComplete(checkpoint_id)``.

    My sinks committed what they pre-committed at or before it, and my sources released
    what it covers. A client that asked for the checkpoint waits for every subtask's.
    """

    checkpoint_id: int
    subtask: SubtaskId


@dataclass(frozen=True, slots=True)
class NotifyCheckpointAborted:
    """Coordinator -> subtask: the checkpoint will never complete; drop work done for it."""

    checkpoint_id: int
    reason: CheckpointFailureReason


@dataclass(frozen=True, slots=True)
class SubtaskInputEnded:
    """Subtask -> coordinator: my input ended, but I still emit (calls of an async operator).

    No barrier can reach such a subtask through its ended channels, so the coordinator
    triggers it directly, as it triggers sources, until it reports ``SubtaskFinished``.
    """

    subtask: SubtaskId


@dataclass(frozen=True, slots=True)
class SubtaskFinished:
    """Subtask -> coordinator: all my input ended and my output is flushed and ended."""

    subtask: SubtaskId
    details: Any = None


@dataclass(frozen=True, slots=True)
class AttemptDeployed:
    """Job master -> coordinator: the subtasks of the attempt are spawned; these are they.

    The first message a coordinator handles; it triggers no checkpoint before it, so that
    every checkpoint reaches every source of the attempt.
    """

    subtasks: Mapping[SubtaskId, ActorRef[Any]]
    sources: frozenset[SubtaskId]
