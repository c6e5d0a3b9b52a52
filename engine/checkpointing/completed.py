"""Completed checkpoints, the store that retains the newest of them, and checkpoint statistics."""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from lockgate.engine.checkpointing.checkpoint_status import CheckpointStatus
from lockgate.engine.checkpointing.messages import (
    CheckpointFailureReason,
    SubtaskCheckpointStats,
    SubtaskId,
)
from lockgate.engine.checkpointing.metadata import CheckpointMetadata

if TYPE_CHECKING:
    from lockgate.engine.checkpointing.pending import PendingCheckpoint

__all__ = [
    "CheckpointRecord",
    "CheckpointStatistics",
    "CheckpointStatsSnapshot",
    "CompletedCheckpoint",
    "CompletedCheckpointStore",
]


@dataclass(frozen=True, slots=True)
class CompletedCheckpoint:
    """A checkpoint whose metadata is written: it can be restored from ``location``.

    Times are on the engine clock, in seconds; ``completion_time >= trigger_time``.
    ``statistics`` is the record of how the checkpoint went, when it was taken by a
    ``PendingCheckpoint``. ``claimed`` marks a snapshot the job restored from in claim mode:
    it lives outside the job's checkpoint storage, and the job deletes its folder once a
    newer checkpoint subsumes it.
    """

    checkpoint_id: int
    trigger_time: float
    completion_time: float
    location: str
    metadata: CheckpointMetadata
    statistics: CheckpointRecord | None = None
    claimed: bool = False

    @property
    def duration(self) -> float:
        """Seconds from the trigger to the completion."""
        return self.completion_time - self.trigger_time


class CompletedCheckpointStore:
    """The newest ``max_retained`` completed checkpoints, ordered by checkpoint id.

    ``add`` returns the checkpoints it no longer retains (subsumed), which the caller
    discards from storage; the store itself does no I/O.
    """

    def __init__(self, max_retained: int = 1) -> None:
        if max_retained < 1:
            raise ValueError(f"max_retained must be at least 1; got {max_retained}")
        self._max_retained = max_retained
        self._checkpoints: list[CompletedCheckpoint] = []

    @property
    def max_retained(self) -> int:
        """How many completed checkpoints are kept."""
        return self._max_retained

    @property
    def latest(self) -> CompletedCheckpoint | None:
        """The completed checkpoint with the highest id, or ``None`` while there is none."""
        return self._checkpoints[-1] if self._checkpoints else None

    @property
    def all(self) -> list[CompletedCheckpoint]:
        """The retained checkpoints, oldest first."""
        return list(self._checkpoints)

    def add(self, completed: CompletedCheckpoint) -> list[CompletedCheckpoint]:
        """Retain ``completed``; return the checkpoints subsumed by it, oldest first.

        Raises:
            ValueError: when a checkpoint with the same id is already retained.
        """
        ids = [checkpoint.checkpoint_id for checkpoint in self._checkpoints]
        if completed.checkpoint_id in ids:
            raise ValueError(f"checkpoint {completed.checkpoint_id} was already added")
        self._checkpoints.insert(bisect.bisect(ids, completed.checkpoint_id), completed)
        excess = max(0, len(self._checkpoints) - self._max_retained)
        subsumed = self._checkpoints[:excess]
        del self._checkpoints[:excess]
        return subsumed

    def __len__(self) -> int:
        return len(self._checkpoints)

    def __repr__(self) -> str:
        ids = [checkpoint.checkpoint_id for checkpoint in self._checkpoints]
        return f"CompletedCheckpointStore(max_retained={self._max_retained}, retained={ids})"


@dataclass(frozen=True, slots=True)
class CheckpointRecord:
    """What one checkpoint cost and how it ended, for reports; times in seconds.

    ``duration`` runs from the trigger to the completion or abort; ``ack_delays`` from the
    trigger to each subtask's acknowledgement (only subtasks that acknowledged appear);
    ``alignment_duration``, ``start_delay``, ``sync_duration`` (the copy taken on the event
    loop) and ``async_duration`` (encoding and writing off it) are maxima over those subtasks.
    ``failure_reason`` is set exactly when ``status`` is ``ABORTED``. ``unaligned`` says
    whether any subtask took its snapshot unaligned, ``persisted_in_flight`` the bytes of
    in-flight records (channel state) all of them stored, and ``subtasks`` what each
    subtask that acknowledged reported (its alignment time, in-flight bytes, ...).
    """

    checkpoint_id: int
    status: CheckpointStatus
    trigger_time: float
    duration: float
    state_size: int
    acknowledged: int
    total: int
    ack_delays: dict[SubtaskId, float] = field(default_factory=dict)
    alignment_duration: float = 0.0
    start_delay: float = 0.0
    failure_reason: CheckpointFailureReason | None = None
    failure_message: str = ""
    sync_duration: float = 0.0
    async_duration: float = 0.0
    unaligned: bool = False
    persisted_in_flight: int = 0
    subtasks: dict[SubtaskId, SubtaskCheckpointStats] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CheckpointStatsSnapshot:
    """Counts of checkpoints by outcome and the most recent records, oldest first."""

    completed: int
    failed: int
    in_progress: int
    history: tuple[CheckpointRecord, ...]
    latest_completed: CheckpointRecord | None
    latest_failed: CheckpointRecord | None


class CheckpointStatistics:
    """Counts checkpoints as they start and end, keeping the last ``history_size`` records.

    A checkpoint counts as in progress from ``on_triggered`` until it completes or aborts;
    then it counts once, as completed or failed, and its record joins the history.
    ``snapshot()`` returns the counts and history as a frozen ``CheckpointStatsSnapshot``.
    """

    def __init__(self, *, history_size: int = 100) -> None:
        if history_size < 1:
            raise ValueError(f"history_size must be at least 1; got {history_size}")
        self._history: deque[CheckpointRecord] = deque(maxlen=history_size)
        self._in_progress: set[int] = set()
        self._counts = {CheckpointStatus.COMPLETED: 0, CheckpointStatus.ABORTED: 0}
        self._latest: dict[CheckpointStatus, CheckpointRecord] = {}

    def on_triggered(self, checkpoint_id: int, trigger_time: float) -> None:
        """Count ``checkpoint_id``, triggered at ``trigger_time``, as in progress."""
        self._in_progress.add(checkpoint_id)

    def on_completed(self, completed: CompletedCheckpoint) -> None:
        """Count ``completed`` and record its statistics."""
        self._report(completed.statistics or _bare_record(completed))

    def on_aborted(
        self, pending: PendingCheckpoint, reason: CheckpointFailureReason, now: float
    ) -> None:
        """Count the aborted ``pending`` checkpoint, ended at ``now`` for ``reason``."""
        record = pending.record(now)
        if record.status is not CheckpointStatus.ABORTED or record.failure_reason is None:
            record = replace(record, status=CheckpointStatus.ABORTED, failure_reason=reason)
        self._report(record)

    def snapshot(self) -> CheckpointStatsSnapshot:
        """Return the counts and the history as they are now."""
        return CheckpointStatsSnapshot(
            completed=self._counts[CheckpointStatus.COMPLETED],
            failed=self._counts[CheckpointStatus.ABORTED],
            in_progress=len(self._in_progress),
            history=tuple(self._history),
            latest_completed=self._latest.get(CheckpointStatus.COMPLETED),
            latest_failed=self._latest.get(CheckpointStatus.ABORTED),
        )

    def _report(self, record: CheckpointRecord) -> None:
        self._in_progress.discard(record.checkpoint_id)
        self._counts[record.status] += 1
        self._latest[record.status] = record
        self._history.append(record)

    def __repr__(self) -> str:
        counts = self._counts
        return (
            f"CheckpointStatistics(completed={counts[CheckpointStatus.COMPLETED]}, "
            f"failed={counts[CheckpointStatus.ABORTED]}, in_progress={len(self._in_progress)})"
        )


def _bare_record(completed: CompletedCheckpoint) -> CheckpointRecord:
    return CheckpointRecord(
        checkpoint_id=completed.checkpoint_id,
        status=CheckpointStatus.COMPLETED,
        trigger_time=completed.trigger_time,
        duration=completed.duration,
        state_size=completed.metadata.state_size,
        acknowledged=0,
        total=0,
    )
