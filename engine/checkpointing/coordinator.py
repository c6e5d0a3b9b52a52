"""CheckpointCoordinator: the actor that triggers checkpoints and completes or aborts them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup

from lockgate.actors import Actor, ActorRef
from lockgate.engine.checkpointing.completed import (
    CheckpointStatistics,
    CompletedCheckpoint,
    CompletedCheckpointStore,
)
from lockgate.engine.checkpointing.config import CheckpointConfig
from lockgate.engine.checkpointing.messages import (
    AcknowledgeCheckpoint,
    CheckpointFailureReason,
    DeclineCheckpoint,
    NotifyCheckpointAborted,
    NotifyCheckpointComplete,
    SubtaskFinished,
    SubtaskId,
    SubtaskInputEnded,
    TriggerCheckpoint,
)
from lockgate.engine.checkpointing.pending import PendingCheckpoint
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.clock import Clock
from lockgate.engine.errors import CheckpointError
from lockgate.engine.runtime.gil_handoff import HANDOFF
from lockgate.engine.runtime.scope import run_with_group

__all__ = ["CheckpointCoordinator", "CheckpointRequest", "CheckpointTicket", "CoordinatorSetup"]

_COUNTED = frozenset(
    {
        CheckpointFailureReason.TIMEOUT,
        CheckpointFailureReason.DECLINED,
        CheckpointFailureReason.STORAGE_FAILED,
    }
)


@dataclass(frozen=True, slots=True)
class CheckpointRequest:
    """Client -> coordinator: take a checkpoint now; the answer is a ``CheckpointTicket``."""


class CheckpointTicket:
    """The future result of one requested checkpoint: ``await ticket.wait()``."""

    def __init__(self, checkpoint_id: int) -> None:
        self.checkpoint_id = checkpoint_id
        self._done = anyio.Event()
        self._completed: CompletedCheckpoint | None = None
        self._failure: BaseException | None = None

    def complete(self, completed: CompletedCheckpoint) -> None:
        """Resolve the ticket with the completed checkpoint."""
        self._completed = completed
        self._done.set()

    def fail(self, failure: BaseException) -> None:
        """Resolve the ticket with an error."""
        self._failure = failure
        self._done.set()

    async def wait(self) -> CompletedCheckpoint:
        """Return the completed checkpoint, or raise why it did not complete."""
        await self._done.wait()
        if self._failure is not None:
            raise self._failure
        assert self._completed is not None
        return self._completed


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

    async def on_control(self, message: Any) -> Any:
        """Dispatch one protocol message."""
        match message:
            case AcknowledgeCheckpoint():
                await self._on_acknowledge(message)
            case DeclineCheckpoint():
                detail = f"subtask {message.subtask} declined it: {message.message}"
                await self._abort(message.checkpoint_id, message.reason, detail=detail)
            case SubtaskFinished():
                self._on_finished(message.subtask)
            case SubtaskInputEnded():
                self._input_ended.add(message.subtask)
                self._trigger_pending_at(message.subtask)
            case CheckpointRequest():
                return self._request()
            case _:
                raise TypeError(f"checkpoint coordinator got unknown message {message!r}")
        return None

    def trigger(self) -> int:
        """Start a new checkpoint now and return its id."""
        setup = self.setup
        checkpoint_id = setup.next_checkpoint_id
        setup.next_checkpoint_id += 1
        now = setup.clock.now()
        self._pending[checkpoint_id] = PendingCheckpoint(
            checkpoint_id, now, setup.subtasks, setup.operator_parallelism
        )
        setup.statistics.on_triggered(checkpoint_id, now)
        message = TriggerCheckpoint(checkpoint_id, now)
        for subtask in setup.sources | self._finished | self._input_ended:
            setup.subtasks[subtask].tell_control(message)
        assert self._group is not None
        self._group.start_soon(self._expire, checkpoint_id)
        return checkpoint_id

    def _request(self) -> CheckpointTicket:
        ticket = CheckpointTicket(self.trigger())
        self._tickets.setdefault(ticket.checkpoint_id, []).append(ticket)
        return ticket

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
        return not paused and not busy and self._final_id is None

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
        if pending is None:
            return  # late: the checkpoint was aborted or subsumed; its files are discarded
        pending.acknowledge(ack, self.setup.clock.now())
        if pending.is_fully_acknowledged:
            await self._complete(pending)

    async def _complete(self, pending: PendingCheckpoint) -> None:
        setup = self.setup
        self._forget(pending.checkpoint_id)  # no timeout may abort it while it is written
        metadata = pending.to_metadata(setup.job_name, setup.max_parallelism)
        try:
            with HANDOFF.lend():
                location = await setup.storage.write_metadata(metadata)
        except Exception as error:
            await self._aborted(pending, CheckpointFailureReason.STORAGE_FAILED, error)
            return
        completed = pending.to_completed(location, setup.clock.now())
        await self._register(completed)
        self._notify(NotifyCheckpointComplete(completed.checkpoint_id))
        for ticket in self._tickets.pop(completed.checkpoint_id, []):
            ticket.complete(completed)
        if completed.checkpoint_id == self._final_id:
            self._stop_job()

    async def _register(self, completed: CompletedCheckpoint) -> None:
        setup = self.setup
        self._failures_in_a_row = 0
        self._last_completed_at = setup.clock.now()
        setup.statistics.on_completed(completed)
        for subsumed in setup.store.add(completed):
            with HANDOFF.lend():
                await setup.storage.discard(setup.job_name, subsumed.checkpoint_id)
        for older in [cid for cid in self._pending if cid < completed.checkpoint_id]:
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
        self.setup.statistics.on_aborted(pending, reason, self.setup.clock.now())
        self._notify(NotifyCheckpointAborted(checkpoint_id, reason))
        with HANDOFF.lend():
            await self.setup.storage.discard(self.setup.job_name, checkpoint_id)
        message = f"{reason.value}: {detail}" if detail else None
        failure = CheckpointError(checkpoint_id, reason, error, message=message)
        for ticket in self._tickets.pop(checkpoint_id, []):
            ticket.fail(failure)
        self._count_failure(reason, failure)
        if checkpoint_id == self._final_id:
            self._final_id = None
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
                self.setup.subtasks[subtask].tell_control(
                    TriggerCheckpoint(checkpoint_id, pending.trigger_time)
                )

    def _trigger_final(self) -> None:
        self._final_id = self.trigger()

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
