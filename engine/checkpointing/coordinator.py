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
from lockgate.engine.checkpointing.decider import (
    CheckpointDecider,
    DrainSources,
    FailJob,
    Refuse,
    StartCheckpoint,
)
from lockgate.engine.checkpointing.gil_handoff import HANDOFF
from lockgate.engine.checkpointing.messages import (
    AcknowledgeCheckpoint,
    AttemptDeployed,
    CheckpointCommitted,
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
from lockgate.engine.checkpointing.outcomes import CheckpointOutcomeListener, IgnoreOutcomes
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
from lockgate.engine.checkpointing.tickets import CheckpointTickets
from lockgate.engine.errors import CheckpointError, StateEncodingError
from lockgate.engine.events import CHECKPOINT, SnapshotKind, SnapshotOptions
from lockgate.engine.time.clock import Clock

__all__ = ["CheckpointCoordinator", "CoordinatorSetup"]


@dataclass(frozen=True, slots=True)
class CoordinatorSetup:
    """Everything the coordinator of one job attempt works with, fixed when it is built.

    The attempt's subtasks come later, in ``AttemptDeployed``; the id of the next checkpoint
    is the coordinator's (``CheckpointCoordinator.next_checkpoint_id``).
    """

    job_name: str
    config: CheckpointConfig
    storage: CheckpointStorage
    store: CompletedCheckpointStore
    statistics: CheckpointStatistics
    clock: Clock
    max_parallelism: int
    operator_parallelism: Mapping[str, int]
    registry: SharedStateRegistry = field(default_factory=SharedStateRegistry)
    first_checkpoint_id: int = 1
    files: CheckpointFiles | None = None  # the job's: an attempt deletes what one before could not
    listener: CheckpointOutcomeListener = field(default_factory=IgnoreOutcomes)


class CheckpointCoordinator(Actor[Any]):
    """Triggers checkpoints, collects acknowledgements, and completes or aborts them.

    A checkpoint exists once its metadata is written, which happens only after every subtask
    acknowledged it; then every subtask hears ``NotifyCheckpointComplete``. A timeout, a
    decline or a storage failure aborts it and every subtask hears ``NotifyCheckpointAborted``
    once. More than ``tolerable_failures`` failed checkpoints in a row fail the job. When every
    subtask has finished its input, a final checkpoint is taken, then all subtasks are stopped.
    Every decision is its ``CheckpointDecider``'s; the actor keeps the timers, the storage
    and the tells.
    """

    control_capacity = 1 << 16

    def __init__(self, setup: CoordinatorSetup) -> None:
        self.setup = setup
        self._decider = CheckpointDecider(
            setup.config, job_name=setup.job_name, next_checkpoint_id=setup.first_checkpoint_id
        )
        self._subtasks: Mapping[SubtaskId, ActorRef[Any]] = {}
        self._sources: frozenset[SubtaskId] = frozenset()
        self._pending: dict[int, PendingCheckpoint] = {}
        self._timeouts: dict[int, anyio.CancelScope] = {}
        self._tickets = CheckpointTickets(setup.job_name)
        self._options: dict[int, SnapshotOptions] = {}
        self._files = setup.files or CheckpointFiles(setup.job_name, setup.storage, setup.registry)
        self._group: TaskGroup | None = None

    async def run(self) -> None:
        """Handle protocol messages; trigger periodic checkpoints in the background."""
        await run_with_group(self._run_in)

    @property
    def next_checkpoint_id(self) -> int:
        """The id the next checkpoint of the job gets (the next attempt starts from it)."""
        return self._decider.next_checkpoint_id

    async def _run_in(self, group: TaskGroup) -> None:
        self._group = group
        await super().run()

    def _on_deployed(self, deployed: AttemptDeployed) -> None:
        self._subtasks, self._sources = deployed.subtasks, deployed.sources
        if self._decider.periodic_interval is not None:
            assert self._group is not None, "the coordinator runs"
            self._group.start_soon(self._trigger_periodically)

    async def on_stop(self) -> None:
        """Abort the checkpoints that can no longer complete, deleting what they wrote."""
        for checkpoint_id in list(self._pending):
            await self._abort(checkpoint_id, CheckpointFailureReason.JOB_ENDED)
        self._tickets.ended(self._describe)

    async def on_control(self, message: Any) -> Any:
        """Dispatch one protocol message."""
        match message:
            case AttemptDeployed():
                self._on_deployed(message)
            case AcknowledgeCheckpoint():
                await self._on_acknowledge(message)
            case DeclineCheckpoint():
                if message.checkpoint_id not in self._pending:  # late: its writes go too
                    await self._files.discard_late(message.checkpoint_id, ())
                detail = f"{self._describe(message.subtask)} declined it: {message.message}"
                kind = self._options.get(message.checkpoint_id, CHECKPOINT).kind
                await self._abort(message.checkpoint_id, message.reason, detail=detail)
                _fail_on_unencodable_state(message, kind)
            case CheckpointCommitted(checkpoint_id=checkpoint_id, subtask=subtask):
                self._tickets.committed(checkpoint_id, subtask)
            case SubtaskFinished():
                self._on_finished(message.subtask)
            case SubtaskInputEnded():
                self._decider.on_input_ended(message.subtask)
                self._trigger_missed(message.subtask)
            case CheckpointRequest(options=options):
                return self._request(options)
            case StopRequest():
                return self._stop_with_savepoint(message)
            case _:
                raise TypeError(f"checkpoint coordinator got unknown message {message!r}")
        return None

    def trigger(self, options: SnapshotOptions = CHECKPOINT) -> int:
        """Start a new checkpoint (or savepoint) now and return its id."""
        return self._start(self._decider.start(options))

    def _start(self, start: StartCheckpoint) -> int:
        setup, checkpoint_id = self.setup, start.checkpoint_id
        self._options[checkpoint_id] = options = self._placed(start.options, checkpoint_id)
        now = setup.clock.now()
        self._pending[checkpoint_id] = PendingCheckpoint(
            checkpoint_id, now, self._subtasks, setup.operator_parallelism
        )
        setup.statistics.on_triggered(checkpoint_id, now)
        message = TriggerCheckpoint(checkpoint_id, now, options)
        for subtask in self._decider.trigger_targets(self._sources):
            self._subtasks[subtask].tell_control(message)
        if start.final:  # a drain's tickets wait for the final snapshot
            self._tickets.final_started(checkpoint_id)
        assert self._group is not None
        self._group.start_soon(self._expire, checkpoint_id)
        return checkpoint_id

    def _request(self, options: SnapshotOptions) -> CheckpointTicket:
        match self._decider.request(options):
            case Refuse(message=message):
                return refused(message)
            case StartCheckpoint() as start:
                return self._ticket_for(start)

    def _stop_with_savepoint(self, request: StopRequest) -> CheckpointTicket:
        match self._decider.stop_with_savepoint(request.target, drain=request.drain):
            case Refuse(message=message):
                return refused(message)
            case DrainSources():
                return self._drain()
            case StartCheckpoint() as start:
                return self._ticket_for(start)

    def _ticket_for(self, start: StartCheckpoint) -> CheckpointTicket:
        return self._tickets.add(CheckpointTicket(self._start(start)))

    def _drain(self) -> CheckpointTicket:
        for source in self._sources:
            self._subtasks[source].tell_control(EndSourceInput())
        return self._tickets.add_stop(CheckpointTicket(-1))  # its id: once every input ended

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
        interval, clock = self._decider.periodic_interval, self.setup.clock
        assert interval is not None
        while True:
            await clock.sleep(interval)
            start = self._decider.periodic(clock.now(), pending=len(self._pending))
            if start is not None:
                self._start(start)

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
            await self._files.discard_late(ack.checkpoint_id, ack.handles.values())
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
        now = setup.clock.now()
        completed = pending.to_completed(location, now)
        stop = self._decider.on_completed(completed.checkpoint_id, kind=kind, now=now)
        setup.statistics.on_completed(completed.record())
        setup.listener.checkpoint_completed(completed, kind)
        if kind is SnapshotKind.CHECKPOINT:  # no retention ever discards a savepoint
            await self._register(completed)
        notify = NotifyCheckpointComplete(completed.checkpoint_id)
        committers = self._notify(notify) if kind.commits else []
        self._tickets.completed(completed, committers if stop is None else ())
        if stop is not None:
            self._stop_job()

    async def _register(self, completed: CompletedCheckpoint) -> None:
        setup = self.setup
        self._files.retain(completed)
        subsumed = setup.store.add(completed)  # maybe none: refused deletes are retried anyway
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
        record = pending.aborted_record(reason, self.setup.clock.now())
        kind = self._options.get(checkpoint_id, CHECKPOINT).kind
        self.setup.statistics.on_aborted(record)
        self.setup.listener.checkpoint_aborted(record, kind)
        self._notify(NotifyCheckpointAborted(checkpoint_id, reason))
        storage, written = self._storage_of(checkpoint_id), pending.handles_written()
        await self._files.discard_aborted(
            storage, checkpoint_id, written, pending=bool(self._pending)
        )
        self._options.pop(checkpoint_id, None)
        message = f"{reason.value}: {detail}" if detail else None
        failure = CheckpointError(checkpoint_id, reason, error, message=message)
        self._tickets.failed(checkpoint_id, failure)
        match self._decider.on_aborted(checkpoint_id, reason):
            case FailJob() as fail:
                raise CheckpointError(checkpoint_id, reason, message=fail.message) from failure
            case StartCheckpoint() as final:
                self._start(final)

    def _on_finished(self, subtask: SubtaskId) -> None:
        subtask_count = len(self._subtasks)
        final = self._decider.on_finished(subtask, subtask_count=subtask_count)
        self._trigger_missed(subtask)
        if final is not None:
            self._start(final)

    def _trigger_missed(self, subtask: SubtaskId) -> None:
        for pending in self._decider.missed_barriers(subtask, self._pending.values()):
            options = self._options.get(pending.checkpoint_id, CHECKPOINT)
            self._subtasks[subtask].tell_control(
                TriggerCheckpoint(pending.checkpoint_id, pending.trigger_time, options)
            )

    def _describe(self, subtask: SubtaskId) -> str:
        ref = self._subtasks.get(subtask)
        return f"subtask {ref.name}" if ref is not None else f"subtask {subtask}"

    def _notify(self, message: Any) -> list[SubtaskId]:
        # Every subtask still alive hears it; they are those returned.
        told = [subtask for subtask, ref in self._subtasks.items() if ref.is_alive]
        for subtask in told:
            self._subtasks[subtask].tell_control(message)
        return told

    def _stop_job(self) -> None:
        for ref in self._subtasks.values():
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
