"""CheckpointCoordinator: the actor that triggers checkpoints and completes or aborts them."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
from anyio.abc import TaskGroup

from lockgate.actors import Actor, ActorRef, run_with_group
from lockgate.engine.checkpointing.completed import CompletedCheckpoint, CompletedCheckpointStore
from lockgate.engine.checkpointing.config import CheckpointConfig
from lockgate.engine.checkpointing.gil_handoff import HANDOFF
from lockgate.engine.checkpointing.messages import (
    AcknowledgeCheckpoint,
    CheckpointFailureReason,
    DeclineCheckpoint,
    EndSourceInput,
    NotifyCheckpointAborted,
    NotifyCheckpointComplete,
    SubtaskFinished,
    SubtaskId,
    SubtaskInputEnded,
    TriggerCheckpoint,
)
from lockgate.engine.checkpointing.pending import PendingCheckpoint
from lockgate.engine.checkpointing.requests import (
    CheckpointRequest,
    CheckpointTicket,
    StopRequest,
    refused,
)
from lockgate.engine.checkpointing.retention import CheckpointFiles
from lockgate.engine.checkpointing.shared_registry import SharedStateRegistry
from lockgate.engine.checkpointing.statistics import CheckpointStatistics
from lockgate.engine.checkpointing.storage import CheckpointStorage, savepoint_folder_for
from lockgate.engine.errors import CheckpointError, JobError, StateEncodingError
from lockgate.engine.events import CHECKPOINT, SnapshotKind, SnapshotOptions
from lockgate.engine.time.clock import Clock

__all__ = ["CheckpointCoordinator", "CoordinatorSetup"]

_COUNTED = frozenset(
    {
        CheckpointFailureReason.TIMEOUT,
        CheckpointFailureReason.DECLINED,
        CheckpointFailureReason.STORAGE_FAILED,
    }
)


@dataclass(slots=True)
class CoordinatorSetup:
    """Everything the coordinator of one job attempt works with."""

    job_name: str
    config: CheckpointConfig
    storage: CheckpointStorage
    store: CompletedCheckpointStore
    statistics: CheckpointStatistics
    clock: Clock
    max_parallelism: int
    operator_parallelism: Mapping[str, int]
    registry: SharedStateRegistry = field(default_factory=SharedStateRegistry)
    subtasks: dict[SubtaskId, ActorRef[Any]] = field(default_factory=dict)
    sources: frozenset[SubtaskId] = frozenset()
    next_checkpoint_id: int = 1


class CheckpointCoordinator(Actor[Any]):
    """Triggers checkpoints, collects acknowledgements, and completes or aborts them.

    A checkpoint exists once its metadata is written, which happens only after every subtask
    acknowledged it; then every subtask hears ``NotifyCheckpointComplete``. A timeout, a
    decline or a storage failure aborts it and every subtask hears ``NotifyCheckpointAborted``
    once. More than ``tolerable_failures`` failed checkpoints in a row fail the job. When every
    subtask has finished its input, a final checkpoint is taken, then all subtasks are stopped.
    """

    control_capacity = 1 << 16

    def __init__(self, setup: CoordinatorSetup) -> None:
        self.setup = setup
        self._pending: dict[int, PendingCheckpoint] = {}
        self._timeouts: dict[int, anyio.CancelScope] = {}
        self._tickets: dict[int, list[CheckpointTicket]] = {}
        self._finished: set[SubtaskId] = set()
        self._input_ended: set[SubtaskId] = set()
        self._final_id: int | None = None
        self._options: dict[int, SnapshotOptions] = {}
        self._stop: SnapshotOptions | None = None
        self._stop_tickets: list[CheckpointTicket] = []
        self._files = CheckpointFiles(setup.job_name, setup.storage, setup.registry)
        self._failures_in_a_row = 0
        self._last_completed_at = -float("inf")
        self._group: TaskGroup | None = None

    async def run(self) -> None:
        """Handle protocol messages; trigger periodic checkpoints in the background."""
        await run_with_group(self._run_in)

    async def _run_in(self, group: TaskGroup) -> None:
        self._group = group
        if self.setup.config.interval is not None:
            group.start_soon(self._trigger_periodically)
        await super().run()

    async def on_stop(self) -> None:
        """Abort the checkpoints that can no longer complete, deleting what they wrote."""
        self._final_id = None
        for checkpoint_id in list(self._pending):
            await self._abort(checkpoint_id, CheckpointFailureReason.JOB_ENDED)
        for ticket in self._stop_tickets:  # a drain that never reached its savepoint
            ticket.fail(
                JobError(
                    f"job '{self.setup.job_name}' attempt ended before its inputs drained; "
                    "no stop savepoint was taken"
                )
            )
        self._stop_tickets.clear()

    async def on_control(self, message: Any) -> Any:
        """Dispatch one protocol message."""
        match message:
            case AcknowledgeCheckpoint():
                await self._on_acknowledge(message)
            case DeclineCheckpoint():
                detail = f"{self._describe(message.subtask)} declined it: {message.message}"
                kind = self._options.get(message.checkpoint_id, CHECKPOINT).kind
                await self._abort(message.checkpoint_id, message.reason, detail=detail)
                _fail_on_unencodable_state(message, kind)
            case SubtaskFinished():
                self._on_finished(message.subtask)
            case SubtaskInputEnded():
                self._input_ended.add(message.subtask)
                self._trigger_pending_at(message.subtask)
            case CheckpointRequest(options=options):
                return self._request(options)
            case StopRequest():
                return self._stop_with_savepoint(message)
            case _:
                raise TypeError(f"checkpoint coordinator got unknown message {message!r}")
        return None

    def trigger(self, options: SnapshotOptions = CHECKPOINT) -> int:
        """Start a new checkpoint (or savepoint) now and return its id."""
        setup = self.setup
        checkpoint_id = setup.next_checkpoint_id
        setup.next_checkpoint_id += 1
        self._options[checkpoint_id] = options = self._placed(options, checkpoint_id)
        now = setup.clock.now()
        self._pending[checkpoint_id] = PendingCheckpoint(
            checkpoint_id, now, setup.subtasks, setup.operator_parallelism
        )
        setup.statistics.on_triggered(checkpoint_id, now)
        message = TriggerCheckpoint(checkpoint_id, now, options)
        for subtask in setup.sources | self._finished | self._input_ended:
            setup.subtasks[subtask].tell_control(message)
        assert self._group is not None
        self._group.start_soon(self._expire, checkpoint_id)
        return checkpoint_id

    def _request(self, options: SnapshotOptions) -> CheckpointTicket:
        if self._stop is not None or self._final_id is not None:
            return refused(f"job '{self.setup.job_name}' is stopping; no checkpoint was taken")
        ticket = CheckpointTicket(self.trigger(options))
        self._tickets.setdefault(ticket.checkpoint_id, []).append(ticket)
        return ticket

    def _stop_with_savepoint(self, request: StopRequest) -> CheckpointTicket:
        if self._stop is not None or self._final_id is not None:
            return refused(f"job '{self.setup.job_name}' is already stopping")
        self._stop = SnapshotOptions(SnapshotKind.STOP_SAVEPOINT, request.target)
        if not request.drain:
            return self._request_final()
        ticket = CheckpointTicket(-1)  # the id is known once every input ended
        self._stop_tickets.append(ticket)
        for source in self.setup.sources:
            self.setup.subtasks[source].tell_control(EndSourceInput())
        return ticket

    def _request_final(self) -> CheckpointTicket:
        assert self._stop is not None
        self._final_id = self.trigger(self._stop)
        ticket = CheckpointTicket(self._final_id)
        self._tickets[self._final_id] = [ticket, *self._stop_tickets]
        self._stop_tickets.clear()
        return ticket

    def _placed(self, options: SnapshotOptions, checkpoint_id: int) -> SnapshotOptions:
        # A checkpoint aligns as the job is configured; a savepoint is always aligned, and
        # gets a folder of its own under the target the client named.
        if not options.kind.is_savepoint:
            config = self.setup.config
            return replace(
                options, unaligned=config.unaligned, aligned_timeout=config.aligned_timeout
            )
        if options.target is None:
            return options
        token = uuid.uuid4().hex[:6]
        folder = f"savepoint-{self.setup.job_name}-{checkpoint_id}-{token}"
        return replace(options, target=f"{options.target.rstrip('/')}/{folder}")

    def _storage_of(self, checkpoint_id: int) -> CheckpointStorage:
        options = self._options.get(checkpoint_id, CHECKPOINT)
        if options.kind.is_savepoint and options.target is not None:
            return savepoint_folder_for(options.target)
        return self.setup.storage

    async def _trigger_periodically(self) -> None:
        config, clock = self.setup.config, self.setup.clock
        assert config.interval is not None
        while True:
            await clock.sleep(config.interval)
            if self._may_trigger():
                self.trigger()

    def _may_trigger(self) -> bool:
        config = self.setup.config
        paused = self.setup.clock.now() - self._last_completed_at < config.min_pause
        busy = len(self._pending) >= config.max_concurrent
        return not paused and not busy and self._final_id is None and self._stop is None

    async def _expire(self, checkpoint_id: int) -> None:
        with anyio.CancelScope() as scope:
            self._timeouts[checkpoint_id] = scope
            await self.setup.clock.sleep(self.setup.config.timeout)
        if not scope.cancel_called and checkpoint_id in self._pending:
            await self._abort(checkpoint_id, CheckpointFailureReason.TIMEOUT)

    def _forget(self, checkpoint_id: int) -> PendingCheckpoint | None:
        # A checkpoint that completed or aborted needs no timeout task any more.
        timeout = self._timeouts.pop(checkpoint_id, None)
        if timeout is not None:
            timeout.cancel()
        return self._pending.pop(checkpoint_id, None)

    async def _on_acknowledge(self, ack: AcknowledgeCheckpoint) -> None:
        pending = self._pending.get(ack.checkpoint_id)
        if pending is None:  # late: the checkpoint was aborted or subsumed
            await self._files.discard_written(ack.handles.values())
            return
        pending.acknowledge(ack, self.setup.clock.now())
        if pending.is_fully_acknowledged:
            await self._complete(pending)

    async def _complete(self, pending: PendingCheckpoint) -> None:
        setup = self.setup
        self._forget(pending.checkpoint_id)  # no timeout may abort it while it is written
        kind = self._options.get(pending.checkpoint_id, CHECKPOINT).kind
        metadata = pending.to_metadata(
            setup.job_name, setup.max_parallelism, is_savepoint=kind.is_savepoint
        )
        if kind.is_savepoint:
            metadata = metadata.with_relative_handles()  # the folder may be moved
        try:
            with HANDOFF.lend():
                storage = self._storage_of(pending.checkpoint_id)
                location = await storage.write_metadata(metadata)
        except Exception as error:
            await self._aborted(pending, CheckpointFailureReason.STORAGE_FAILED, error)
            return
        self._options.pop(pending.checkpoint_id, None)
        completed = pending.to_completed(location, setup.clock.now())
        if kind is SnapshotKind.CHECKPOINT:
            await self._register(completed)
        else:  # a savepoint belongs to whoever asked for it: no retention ever discards it
            self._failures_in_a_row = 0
            setup.statistics.on_completed(completed.record())
        if kind.commits:
            self._notify(NotifyCheckpointComplete(completed.checkpoint_id))
        for ticket in self._tickets.pop(completed.checkpoint_id, []):
            ticket.complete(completed)
        if completed.checkpoint_id == self._final_id:
            self._stop_job()

    async def _register(self, completed: CompletedCheckpoint) -> None:
        setup = self.setup
        self._failures_in_a_row = 0
        self._last_completed_at = setup.clock.now()
        setup.statistics.on_completed(completed.record())
        self._files.retain(completed)
        for subsumed in setup.store.add(completed):
            with HANDOFF.lend():
                await self._files.discard_subsumed(subsumed, pending=bool(self._pending))
        for older in [cid for cid in self._pending if cid < completed.checkpoint_id]:
            if not self._options.get(older, CHECKPOINT).kind.is_savepoint:  # as in Flink
                await self._abort(older, CheckpointFailureReason.SUBSUMED)

    async def _abort(
        self,
        checkpoint_id: int,
        reason: CheckpointFailureReason,
        error: BaseException | None = None,
        *,
        detail: str = "",
    ) -> None:
        pending = self._forget(checkpoint_id)
        if pending is not None:
            await self._aborted(pending, reason, error, detail=detail)

    async def _aborted(
        self,
        pending: PendingCheckpoint,
        reason: CheckpointFailureReason,
        error: BaseException | None,
        *,
        detail: str = "",
    ) -> None:
        checkpoint_id = pending.checkpoint_id
        detail = detail or (repr(error) if error else "")
        pending.abort(reason, message=detail)
        self.setup.statistics.on_aborted(pending.aborted_record(reason, self.setup.clock.now()))
        self._notify(NotifyCheckpointAborted(checkpoint_id, reason))
        with HANDOFF.lend():
            await self._storage_of(checkpoint_id).discard(self.setup.job_name, checkpoint_id)
            await self._files.discard_written(pending.handles_written())
            await self._files.delete_released(pending=bool(self._pending))
        self._options.pop(checkpoint_id, None)
        message = f"{reason.value}: {detail}" if detail else None
        failure = CheckpointError(checkpoint_id, reason, error, message=message)
        for ticket in self._tickets.pop(checkpoint_id, []):
            ticket.fail(failure)
        self._count_failure(reason, failure)
        if checkpoint_id == self._final_id:
            self._final_id = None
            self._stop = None  # a failed stop savepoint leaves the job running, as in Flink
            if len(self._finished) == len(self.setup.subtasks):
                self._trigger_final()

    def _count_failure(self, reason: CheckpointFailureReason, failure: CheckpointError) -> None:
        if reason not in _COUNTED:
            return
        self._failures_in_a_row += 1
        if self._failures_in_a_row > self.setup.config.tolerable_failures:
            raise CheckpointError(
                failure.checkpoint_id,
                reason,
                message=f"{self._failures_in_a_row} checkpoints failed in a row, more than "
                f"tolerable_failures={self.setup.config.tolerable_failures}; the job fails",
            ) from failure

    def _on_finished(self, subtask: SubtaskId) -> None:
        self._finished.add(subtask)
        self._input_ended.discard(subtask)
        self._trigger_pending_at(subtask)
        if len(self._finished) == len(self.setup.subtasks):
            self._trigger_final()

    def _trigger_pending_at(self, subtask: SubtaskId) -> None:
        # Barriers of checkpoints in progress can no longer reach it through its channels.
        for checkpoint_id, pending in sorted(self._pending.items()):
            if not pending.has_acknowledged(subtask):
                options = self._options.get(checkpoint_id, CHECKPOINT)
                self.setup.subtasks[subtask].tell_control(
                    TriggerCheckpoint(checkpoint_id, pending.trigger_time, options)
                )

    def _trigger_final(self) -> None:
        if self._stop is not None:
            self._request_final()
        else:
            self._final_id = self.trigger()

    def _describe(self, subtask: SubtaskId) -> str:
        ref = self.setup.subtasks.get(subtask)
        return f"subtask {ref.name}" if ref is not None else f"subtask {subtask}"

    def _notify(self, message: Any) -> None:
        for ref in self.setup.subtasks.values():
            if ref.is_alive:
                ref.tell_control(message)

    def _stop_job(self) -> None:
        for ref in self.setup.subtasks.values():
            ref.stop()
        self.context.ref.stop()

    def __repr__(self) -> str:
        pending = sorted(self._pending)
        return f"<CheckpointCoordinator {self.setup.job_name!r} pending={pending}>"


def _fail_on_unencodable_state(decline: DeclineCheckpoint, kind: SnapshotKind) -> None:
    # A savepoint that cannot encode a value fails alone (register the type); a checkpoint
    # that cannot pickle state fails the job, as no restart could ever take one.
    if decline.reason is CheckpointFailureReason.UNENCODABLE_STATE and not kind.is_savepoint:
        raise StateEncodingError(f"checkpoint {decline.checkpoint_id} failed: {decline.message}")
