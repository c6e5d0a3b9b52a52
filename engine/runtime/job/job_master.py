"""JobMaster: runs a job attempt by attempt, restoring each from the latest checkpoint."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import anyio

from lockgate.actors import ActorCrashed, ActorSystem, single_error
from lockgate.engine.checkpointing.completed import CompletedCheckpoint, CompletedCheckpointStore
from lockgate.engine.checkpointing.config import CheckpointConfig
from lockgate.engine.checkpointing.coordinator import CheckpointCoordinator, CoordinatorSetup
from lockgate.engine.checkpointing.messages import AttemptDeployed
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.checkpointing.requests import CheckpointRequest, CheckpointTicket
from lockgate.engine.checkpointing.shared_registry import SharedStateRegistry
from lockgate.engine.checkpointing.statistics import CheckpointStatistics
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.checkpointing.storage.checkpoint_storage import first_unused_id
from lockgate.engine.checkpointing.storage.job_lock import JobLock
from lockgate.engine.checkpointing.storage.layout import METADATA_NAME
from lockgate.engine.errors import EngineError, JobError, RestoreError, StateEncodingError
from lockgate.engine.graph.job_graph import OperatorKind
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.restore.loader import load_restored_state
from lockgate.engine.restore.native import discard_downloads
from lockgate.engine.restore.resolve import RestoreSettings
from lockgate.engine.runtime.job.deployment import Attempt, Deployment, RuntimeOptions, deploy
from lockgate.engine.runtime.job.restart import RestartStrategy
from lockgate.engine.runtime.metrics import JobMetrics
from lockgate.engine.savepoints.values import ValueCodec
from lockgate.engine.state.local_state import claimed_local_state
from lockgate.engine.state.native_snapshot import NativeRestoreTarget

__all__ = ["JobMaster", "JobSettings"]


@dataclass(frozen=True, slots=True)
class JobSettings:
    """How a job checkpoints, where, how it restarts, and what it starts from."""

    checkpoints: CheckpointConfig
    storage: CheckpointStorage
    restart_strategy: RestartStrategy
    restore: RestoreSettings | None = None
    savepoint_codec: ValueCodec = field(default_factory=ValueCodec)


class JobMaster:
    """Runs attempts of a job until one finishes, is cancelled, or the restart strategy gives up.

    Each attempt is an actor system: a checkpoint coordinator and the plan's subtasks. A
    subtask that fails cancels every other one (supervision escalates); the master then asks
    the restart strategy, and the next attempt restores every operator from the latest
    completed checkpoint (sources rewind to its positions, sinks recover its transactions).
    ``cancel`` stops the current attempt; ``run`` then returns ``False``.
    """

    def __init__(
        self, name: str, plan: ExecutionPlan, options: RuntimeOptions, settings: JobSettings
    ) -> None:
        self.name = name
        self.plan = plan
        self.options = options
        self.settings = settings
        self.store = CompletedCheckpointStore(settings.checkpoints.max_retained)
        self.statistics = CheckpointStatistics()
        self.registry = SharedStateRegistry()
        self.attempt_number = 0
        self.run_id = uuid.uuid4().hex[:12]
        self.failures: list[BaseException] = []
        restore = settings.restore
        self._next_checkpoint_id = 1 + (restore.metadata.checkpoint_id if restore else 0)
        self._restore_from = None if restore is None else restore.metadata
        self._restore_storage = settings.storage if restore is None else restore.storage
        if restore is not None and restore.claim:
            claimed = _claimed(restore)
            self.store.recover(claimed)
            for checkpoint in claimed:  # their shared files are the job's now
                self.registry.register(checkpoint.metadata)
        self._deployment: Deployment | None = None
        self._system: ActorSystem | None = None
        self._coordinator: Any = None
        self._coordinator_actor: CheckpointCoordinator | None = None
        self._coordinator_ready = anyio.Event()
        self._ended = False
        self._cancelled = False

    async def run(self) -> bool:
        """Run the job to its end; return ``True`` if it finished, ``False`` if cancelled.

        A run holds its storage's ``JobLock`` for the job from start to end: a second run of
        the name on the storage is refused. It claims the local folders of a state backend
        that keeps them (``LocalStateOwner``), which removes those that dead runs left.
        Checkpoints are numbered above every id the storage holds for the job: a run never
        overwrites a checkpoint of an earlier one, and the newest checkpoint has the
        highest id.
        """
        storage = self.settings.storage
        try:
            async with (
                JobLock(storage, self.name, run_id=self.run_id),
                claimed_local_state(self.options.state_backend, self.name, self.run_id),
            ):
                unused = await first_unused_id(storage, self.name)
                self._next_checkpoint_id = max(self._next_checkpoint_id, unused)
                return await self._run_attempts()
        finally:
            self._ended = True
            self._coordinator_ready.set()

    async def _run_attempts(self) -> bool:
        tracker = self.settings.restart_strategy.tracker()
        clock = self.options.clock
        while True:
            try:
                return await self._run_attempt()
            except JobError as failure:
                delay = tracker.on_failure(clock.now())
                if delay is None or self._cancelled:
                    raise
                self.failures.append(failure)
            await clock.sleep(delay)
            self.attempt_number += 1
            latest = self.store.latest
            if latest is not None and latest.metadata is not self._restore_from:
                self._restore_from = latest.metadata
                self._restore_storage = self.settings.storage

    def cancel(self) -> None:
        """Stop every subtask of the current attempt now, and start no other."""
        self._cancelled = True
        if self._system is not None:
            self._system.cancel()

    async def trigger_checkpoint(self, request: Any = None) -> CheckpointTicket:
        """Start a checkpoint (or ``request``) once the current attempt runs.

        ``request`` is a ``CheckpointRequest`` (the default: a checkpoint) or a
        ``StopRequest``; the ticket resolves when the snapshot completed or failed.
        """
        while self._coordinator is None:
            if self._ended:
                raise JobError(f"job '{self.name}' has ended; no checkpoint can be taken")
            await self._coordinator_ready.wait()
        message = CheckpointRequest() if request is None else request
        ticket: CheckpointTicket = await self._coordinator.ask_control(message)
        return ticket

    def metrics(self) -> JobMetrics:
        """Return every subtask's counters and the checkpoint statistics now."""
        subtasks = () if self._deployment is None else self._deployment.subtasks
        return JobMetrics(
            self.name,
            tuple(subtask.statistics() for subtask, _ in subtasks),
            checkpoints=self.statistics.snapshot(),
            attempt=self.attempt_number,
        )

    async def _run_attempt(self) -> bool:
        restored = await self._load_restored()
        failure: BaseException | None = None
        try:
            async with ActorSystem(self.name) as system:
                self._system = system
                try:
                    self._deploy(system, restored)
                except Exception as error:  # a source or sink refused to start
                    failure = error
                    system.cancel()
                if self._cancelled:
                    system.cancel()
        except ActorCrashed as crash:
            failure = _job_failure(crash)
        finally:
            discard_downloads(restored)  # files downloaded for operators never built
            self._system = None
            self._coordinator = None
            self._coordinator_ready = anyio.Event()
            if self._coordinator_actor is not None:
                self._next_checkpoint_id = self._coordinator_actor.next_checkpoint_id
        if failure is not None:
            raise failure
        return not self._cancelled

    async def _load_restored(self) -> dict[str, Any]:
        if self._restore_from is None:
            return {}
        restore = self.settings.restore
        backend = self.options.state_backend
        return await load_restored_state(
            self._restore_from,
            self.plan,
            self._restore_storage,
            self.options.max_parallelism,
            allow_non_restored_state=restore is not None and restore.allow_non_restored_state,
            codec=self.settings.savepoint_codec,
            native_target=backend if isinstance(backend, NativeRestoreTarget) else None,
        )

    def _deploy(self, system: ActorSystem, restored: dict[str, Any]) -> None:
        coordinator = self._coordinator_actor = CheckpointCoordinator(self._coordinator_setup())
        self._coordinator = system.spawn(coordinator, name="coordinator")
        self._coordinator_ready.set()
        attempt = Attempt(
            self.name,
            self.attempt_number,
            self.settings.storage,
            self._coordinator,
            restored,
            run_id=self.run_id,
            savepoint_codec=self.settings.savepoint_codec,
        )
        self._deployment = deploy(self.plan, self.options, attempt)
        subtasks = {
            subtask.settings.subtask_id: system.spawn(
                subtask, name=subtask.display_name, doorbell=doorbell
            )
            for subtask, doorbell in self._deployment.subtasks
        }
        sources = frozenset(
            subtask.settings.subtask_id
            for subtask, _ in self._deployment.subtasks
            if subtask.settings.chain.head.kind is OperatorKind.SOURCE
        )
        self._coordinator.tell_control(AttemptDeployed(subtasks, sources))

    def _coordinator_setup(self) -> CoordinatorSetup:
        return CoordinatorSetup(
            job_name=self.name,
            config=self.settings.checkpoints,
            storage=self.settings.storage,
            store=self.store,
            statistics=self.statistics,
            clock=self.options.clock,
            max_parallelism=self.options.max_parallelism,
            operator_parallelism={node.uid: node.parallelism for node in self.plan.graph},
            first_checkpoint_id=self._next_checkpoint_id,
            registry=self.registry,
        )


def _claimed(restore: RestoreSettings) -> list[CompletedCheckpoint]:
    # A snapshot given by location lives in a folder the job deletes once it is subsumed;
    # the checkpoints of the job's own storage ("latest") are discarded like any other of them.
    location = restore.location.rstrip("/")
    if location and not location.endswith(METADATA_NAME):
        location = f"{location}/{METADATA_NAME}"
    earlier = [_completed(metadata, "") for metadata in restore.earlier]
    return [*earlier, _completed(restore.metadata, location)]


def _completed(metadata: CheckpointMetadata, location: str) -> CompletedCheckpoint:
    timestamp = metadata.timestamp
    return CompletedCheckpoint(
        metadata.checkpoint_id, timestamp, timestamp, location, metadata, claimed=bool(location)
    )


def _job_failure(crash: ActorCrashed) -> BaseException:
    cause = crash.__cause__
    if isinstance(cause, BaseExceptionGroup):
        cause = single_error(cause)
    if isinstance(cause, JobError | RestoreError | StateEncodingError):
        return cause  # a restore or encoding error is not retried: it would come back
    if isinstance(cause, EngineError):
        error: JobError = JobError(f"actor {crash.actor} failed: {cause}")
    else:
        error = JobError(f"subtask {crash.actor} failed outside user code: {cause!r}")
    error.__cause__ = cause
    return error
