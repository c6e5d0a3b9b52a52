"""PendingCheckpoint: who has acknowledged a checkpoint, and what they wrote.

This is the coordinator's functional core for one checkpoint: it turns acknowledgements and
declines into bookkeeping and answers, and never does I/O or reads a clock.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import replace

from lockgate.engine.checkpointing.checkpoint_status import CheckpointStatus
from lockgate.engine.checkpointing.completed import CompletedCheckpoint
from lockgate.engine.checkpointing.messages import (
    AcknowledgeCheckpoint,
    CheckpointFailureReason,
    DeclineCheckpoint,
    StateHandle,
    SubtaskCheckpointStats,
    SubtaskId,
)
from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.statistics import CheckpointRecord

__all__ = ["AckResult", "PendingCheckpoint"]


class AckResult(enum.Enum):
    """What a pending checkpoint made of an acknowledgement (or decline)."""

    SUCCESS = "the message was recorded"
    DUPLICATE = "the subtask had already acknowledged the checkpoint"
    UNKNOWN = "the subtask does not take part in the checkpoint"
    DISCARDED = "the checkpoint had already completed or been aborted"


class PendingCheckpoint:
    """A triggered checkpoint waiting for every subtask in ``tasks_to_ack`` to acknowledge.

    Each expected subtask is counted once; messages from other subtasks, repeated messages
    and messages after the checkpoint ended change nothing. It completes only once every
    expected subtask has acknowledged, and ends exactly once: ``COMPLETED`` or ``ABORTED``
    (with a ``failure_reason``). ``operator_parallelism`` names every operator uid of the
    job with its parallelism; acknowledgements carry handles only for those.
    """

    def __init__(
        self,
        checkpoint_id: int,
        trigger_time: float,
        tasks_to_ack: Iterable[SubtaskId],
        operator_parallelism: Mapping[str, int],
    ) -> None:
        self.checkpoint_id = checkpoint_id
        self.trigger_time = trigger_time
        self._tasks_to_ack = frozenset(tasks_to_ack)
        self._operator_parallelism = dict(operator_parallelism)
        self._acks: dict[SubtaskId, AcknowledgeCheckpoint] = {}
        self._ack_times: dict[SubtaskId, float] = {}
        self._status = CheckpointStatus.PENDING
        self._failure_reason: CheckpointFailureReason | None = None
        self._failure_message = ""
        self._metadata: CheckpointMetadata | None = None

    @property
    def status(self) -> CheckpointStatus:
        """Where the checkpoint is in its lifecycle."""
        return self._status

    @property
    def failure_reason(self) -> CheckpointFailureReason | None:
        """Why the checkpoint was aborted; ``None`` unless it was."""
        return self._failure_reason

    @property
    def failure_message(self) -> str:
        """Details of the abort (which subtask declined, and what it said)."""
        return self._failure_message

    @property
    def is_fully_acknowledged(self) -> bool:
        """Whether every expected subtask has acknowledged."""
        return len(self._acks) == len(self._tasks_to_ack)

    @property
    def not_yet_acknowledged(self) -> frozenset[SubtaskId]:
        """The expected subtasks that have not acknowledged yet."""
        return self._tasks_to_ack - self._acks.keys()

    def has_acknowledged(self, subtask: SubtaskId) -> bool:
        """Whether ``subtask`` has acknowledged this checkpoint."""
        return subtask in self._acks

    @property
    def handles(self) -> dict[str, dict[int, StateHandle]]:
        """Operator uid -> subtask index -> handle, merged from the acknowledgements so far."""
        merged: dict[str, dict[int, StateHandle]] = {}
        for subtask, ack in self._acks.items():
            for uid, handle in ack.handles.items():
                merged.setdefault(uid, {})[subtask.subtask_index] = handle
        return merged

    @property
    def subtask_stats(self) -> dict[SubtaskId, SubtaskCheckpointStats]:
        """The statistics each acknowledging subtask reported."""
        return {subtask: ack.stats for subtask, ack in self._acks.items()}

    @property
    def state_size(self) -> int:
        """Bytes written by the subtasks that acknowledged so far."""
        return sum(h.size for ack in self._acks.values() for h in ack.handles.values())

    def acknowledge(self, ack: AcknowledgeCheckpoint, now: float) -> AckResult:
        """Record ``ack``, received at ``now``, unless it is a duplicate, unknown or late.

        Raises:
            ValueError: when ``ack`` is for another checkpoint, or carries a handle for an
                operator or subtask index the job does not have.
        """
        self._check_addressed_here(ack.checkpoint_id)
        if self._status is not CheckpointStatus.PENDING:
            return AckResult.DISCARDED
        if ack.subtask not in self._tasks_to_ack:
            return AckResult.UNKNOWN
        if ack.subtask in self._acks:
            return AckResult.DUPLICATE
        self._check_handles(ack)
        self._acks[ack.subtask] = ack
        self._ack_times[ack.subtask] = now
        return AckResult.SUCCESS

    def decline(self, decline: DeclineCheckpoint) -> AckResult:
        """Abort the checkpoint because an expected subtask declined it.

        Returns ``SUCCESS`` when the decline aborted the checkpoint (its reason becomes the
        failure reason), ``UNKNOWN`` for a subtask that does not take part, ``DISCARDED``
        when the checkpoint had already ended.
        """
        self._check_addressed_here(decline.checkpoint_id)
        if self._status is not CheckpointStatus.PENDING:
            return AckResult.DISCARDED
        if decline.subtask not in self._tasks_to_ack:
            return AckResult.UNKNOWN
        detail = decline.message or decline.reason.value
        self.abort(decline.reason, message=f"subtask {decline.subtask} declined: {detail}")
        return AckResult.SUCCESS

    def abort(self, reason: CheckpointFailureReason, *, message: str = "") -> None:
        """End the checkpoint as ``ABORTED`` for ``reason``.

        Raises:
            IllegalStateTransition: when the checkpoint has already ended.
        """
        self._advance(CheckpointStatus.ABORTED)
        self._failure_reason = reason
        self._failure_message = message or reason.value

    def handles_written(self) -> list[StateHandle]:
        """Every state handle the subtasks that acknowledged so far reported."""
        return [handle for handles in self.handles.values() for handle in handles.values()]

    def operator_states(self) -> dict[str, OperatorStateHandles]:
        """Every operator's handles, one slot per subtask (``None`` where none was written)."""
        merged = self.handles
        return {
            uid: OperatorStateHandles(
                parallelism, tuple(merged.get(uid, {}).get(index) for index in range(parallelism))
            )
            for uid, parallelism in self._operator_parallelism.items()
        }

    def to_metadata(
        self,
        job_name: str,
        max_parallelism: int,
        *,
        timestamp: float | None = None,
        is_savepoint: bool = False,
    ) -> CheckpointMetadata:
        """Return the metadata to write for this fully acknowledged checkpoint.

        ``timestamp`` defaults to the trigger time. The metadata is kept for
        ``to_completed``.

        Raises:
            ValueError: when some subtask has not acknowledged.
        """
        self._check_completable()
        self._metadata = CheckpointMetadata(
            job_name=job_name,
            checkpoint_id=self.checkpoint_id,
            timestamp=self.trigger_time if timestamp is None else timestamp,
            max_parallelism=max_parallelism,
            operators=self.operator_states(),
            is_savepoint=is_savepoint,
        )
        return self._metadata

    def to_completed(
        self, location: str, completion_time: float, metadata: CheckpointMetadata | None = None
    ) -> CompletedCheckpoint:
        """End the checkpoint as ``COMPLETED``, its metadata written at ``location``.

        ``metadata`` defaults to what ``to_metadata`` returned last.

        Raises:
            ValueError: when some subtask has not acknowledged, or there is no metadata for
                this checkpoint.
            IllegalStateTransition: when the checkpoint has already ended.
        """
        written = self._written_metadata(metadata)
        self._check_completable()
        self._advance(CheckpointStatus.COMPLETED)
        return CompletedCheckpoint(
            self.checkpoint_id,
            self.trigger_time,
            completion_time,
            location,
            written,
            statistics=self.record(completion_time),
        )

    def record(self, end_time: float) -> CheckpointRecord:
        """Return the statistics of this checkpoint, taken as ended at ``end_time``."""
        stats = self.subtask_stats.values()
        return CheckpointRecord(
            checkpoint_id=self.checkpoint_id,
            status=self._status,
            trigger_time=self.trigger_time,
            duration=end_time - self.trigger_time,
            state_size=self.state_size,
            acknowledged=len(self._acks),
            total=len(self._tasks_to_ack),
            ack_delays={s: at - self.trigger_time for s, at in self._ack_times.items()},
            alignment_duration=max((s.alignment_duration for s in stats), default=0.0),
            start_delay=max((s.start_delay for s in stats), default=0.0),
            failure_reason=self._failure_reason,
            failure_message=self._failure_message,
            sync_duration=max((s.sync_duration for s in stats), default=0.0),
            async_duration=max((s.async_duration for s in stats), default=0.0),
            unaligned=any(s.unaligned for s in stats),
            persisted_in_flight=sum(s.persisted_in_flight for s in stats),
            subtasks=self.subtask_stats,
        )

    def aborted_record(self, reason: CheckpointFailureReason, end_time: float) -> CheckpointRecord:
        """Return the statistics of this checkpoint as aborted for ``reason`` at ``end_time``."""
        record = self.record(end_time)
        if record.status is CheckpointStatus.ABORTED and record.failure_reason is not None:
            return record
        return replace(record, status=CheckpointStatus.ABORTED, failure_reason=reason)

    def _advance(self, target: CheckpointStatus) -> None:
        lifecycle = f"checkpoint {self.checkpoint_id}"
        self._status = self._status.advance(target, lifecycle=lifecycle)

    def _check_addressed_here(self, checkpoint_id: int) -> None:
        if checkpoint_id != self.checkpoint_id:
            raise ValueError(
                f"a message for checkpoint {checkpoint_id} reached pending checkpoint "
                f"{self.checkpoint_id}"
            )

    def _written_metadata(self, metadata: CheckpointMetadata | None) -> CheckpointMetadata:
        written = metadata or self._metadata
        if written is None:
            raise ValueError(
                f"checkpoint {self.checkpoint_id} cannot complete without its metadata; "
                "call to_metadata() and write it first"
            )
        if written.checkpoint_id != self.checkpoint_id:
            raise ValueError(
                f"checkpoint {self.checkpoint_id} cannot complete with the metadata of "
                f"checkpoint {written.checkpoint_id}"
            )
        return written

    def _check_handles(self, ack: AcknowledgeCheckpoint) -> None:
        index = ack.subtask.subtask_index
        for uid in ack.handles:
            parallelism = self._operator_parallelism.get(uid)
            if parallelism is None or index >= parallelism:
                raise ValueError(
                    f"subtask {ack.subtask} acknowledged checkpoint {self.checkpoint_id} with "
                    f"state for operator '{uid}' subtask {index}, which the job does not have"
                )

    def _check_completable(self) -> None:
        missing = sorted(self.not_yet_acknowledged)
        if missing:
            waiting = ", ".join(str(subtask) for subtask in missing)
            raise ValueError(
                f"checkpoint {self.checkpoint_id} cannot complete: subtasks {waiting} have "
                "not acknowledged it"
            )

    def __repr__(self) -> str:
        return (
            f"PendingCheckpoint(id={self.checkpoint_id}, status={self._status.name}, "
            f"acknowledged={len(self._acks)}/{len(self._tasks_to_ack)})"
        )
