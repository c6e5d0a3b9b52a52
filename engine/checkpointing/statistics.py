"""Checkpoint statistics: a record per checkpoint, and counts by outcome with a history.

The coordinator reports each checkpoint's ``CheckpointRecord`` as it completes or aborts;
this module knows neither pending nor completed checkpoints, only their records.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from lockgate.engine.checkpointing.checkpoint_status import CheckpointStatus
from lockgate.engine.checkpointing.messages import (
    CheckpointFailureReason,
    SubtaskCheckpointStats,
    SubtaskId,
)

__all__ = ["CheckpointRecord", "CheckpointStatistics", "CheckpointStatsSnapshot"]


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

    def on_completed(self, record: CheckpointRecord) -> None:
        """Count the completed checkpoint ``record`` describes, and keep the record."""
        self._report(record)

    def on_aborted(self, record: CheckpointRecord) -> None:
        """Count the aborted checkpoint ``record`` describes, and keep the record."""
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
