"""Checkpoint metrics: the checkpoint statistics as plain data, with wall-clock stamps.

``checkpoint_metrics`` turns a ``CheckpointStatsSnapshot`` (records keyed by ``SubtaskId``,
enums, times on the job's clock) into ``CheckpointMetrics``: subtasks keyed
``"<uid>#<index>"`` as in ``SubtaskMetrics.key``, statuses and failure reasons as strings,
and each trigger time stamped on the wall clock as well, for the phases Flink reports
per checkpoint (trigger, start delay, alignment, sync and async parts, size, unaligned or
not, persisted in-flight data).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lockgate.engine.checkpointing.messages import SubtaskCheckpointStats, SubtaskId
from lockgate.engine.checkpointing.statistics import CheckpointRecord, CheckpointStatsSnapshot

__all__ = ["CheckpointMetrics", "CheckpointRecordMetrics", "checkpoint_metrics"]


@dataclass(frozen=True, slots=True)
class CheckpointRecordMetrics:
    """One checkpoint: how it ended and what each phase cost, in seconds and bytes.

    ``status`` is ``"completed"`` or ``"aborted"``; ``failure_reason`` the name of its
    ``CheckpointFailureReason`` exactly when aborted. ``trigger_time`` is on the job's
    clock, ``trigger_timestamp`` the same moment in seconds since the epoch. ``duration``
    runs from the trigger to the end; ``alignment_duration``, ``start_delay``,
    ``sync_duration`` and ``async_duration`` are maxima over the subtasks that
    acknowledged, each of which ``subtasks`` and ``ack_delays`` hold by key.
    """

    checkpoint_id: int
    status: str
    trigger_time: float
    trigger_timestamp: float
    duration: float
    state_size: int
    acknowledged: int
    total: int
    alignment_duration: float
    start_delay: float
    sync_duration: float
    async_duration: float
    unaligned: bool
    persisted_in_flight: int
    failure_reason: str | None
    failure_message: str
    ack_delays: dict[str, float]
    subtasks: dict[str, SubtaskCheckpointStats]


@dataclass(frozen=True, slots=True)
class CheckpointMetrics:
    """Counts of checkpoints by outcome, the latest of each, and the history, oldest first."""

    completed: int = 0
    failed: int = 0
    in_progress: int = 0
    latest_completed: CheckpointRecordMetrics | None = None
    latest_failed: CheckpointRecordMetrics | None = None
    history: list[CheckpointRecordMetrics] = field(default_factory=list)


def checkpoint_metrics(
    snapshot: CheckpointStatsSnapshot,
    key_of: Callable[[SubtaskId], str],
    wall_time_at: Callable[[float], float],
) -> CheckpointMetrics:
    """``snapshot`` as plain data: subtasks named by ``key_of``, times stamped by ``wall_time_at``.

    ``wall_time_at(t)`` is the wall-clock time of the job clock's time ``t``.
    """

    def convert(record: CheckpointRecord | None) -> CheckpointRecordMetrics | None:
        return None if record is None else _record(record, key_of, wall_time_at)

    return CheckpointMetrics(
        completed=snapshot.completed,
        failed=snapshot.failed,
        in_progress=snapshot.in_progress,
        latest_completed=convert(snapshot.latest_completed),
        latest_failed=convert(snapshot.latest_failed),
        history=[_record(record, key_of, wall_time_at) for record in snapshot.history],
    )


def _record(
    record: CheckpointRecord,
    key_of: Callable[[SubtaskId], str],
    wall_time_at: Callable[[float], float],
) -> CheckpointRecordMetrics:
    reason = record.failure_reason
    return CheckpointRecordMetrics(
        checkpoint_id=record.checkpoint_id,
        status=record.status.value,
        trigger_time=record.trigger_time,
        trigger_timestamp=wall_time_at(record.trigger_time),
        duration=record.duration,
        state_size=record.state_size,
        acknowledged=record.acknowledged,
        total=record.total,
        alignment_duration=record.alignment_duration,
        start_delay=record.start_delay,
        sync_duration=record.sync_duration,
        async_duration=record.async_duration,
        unaligned=record.unaligned,
        persisted_in_flight=record.persisted_in_flight,
        failure_reason=None if reason is None else reason.name,
        failure_message=record.failure_message,
        ack_delays={key_of(subtask): delay for subtask, delay in record.ack_delays.items()},
        subtasks={key_of(subtask): stats for subtask, stats in record.subtasks.items()},
    )
