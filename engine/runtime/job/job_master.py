"""JobMaster: runs a job attempt by attempt, restoring each from the latest checkpoint."""

from __future__ import annotations

import uuid
from collections.abc import Callable
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
from lockgate.engine.checkpointing.retention import CheckpointFiles
from lockgate.engine.checkpointing.shared_registry import SharedStateRegistry
from lockgate.engine.checkpointing.statistics import CheckpointStatistics
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.checkpointing.storage.checkpoint_storage import first_unused_id
from lockgate.engine.checkpointing.storage.job_lock import JobLock
from lockgate.engine.checkpointing.storage.layout import METADATA_NAME
from lockgate.engine.errors import (
    AsyncioRequired,
    EngineError,
    JobError,
    RestoreError,
    StateEncodingError,
)
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.restore.fallback import load_newest_restorable
from lockgate.engine.restore.loader import load_restored_state
from lockgate.engine.restore.native import discard_downloads
from lockgate.engine.restore.resolve import RestoreSettings
from lockgate.engine.runtime.executors.executor import AttemptHost, Executor, HostedAttempt
from lockgate.engine.runtime.executors.local import LocalExecutor
from lockgate.engine.runtime.job.coordinator_slot import CoordinatorSlot
from lockgate.engine.runtime.job.deployment import Attempt, RuntimeOptions
from lockgate.engine.runtime.job.job_events import JobEvents
from lockgate.engine.runtime.job.lifecycle import JobFailure
from lockgate.engine.runtime.job.restart import RestartStrategy
from lockgate.engine.runtime.job.split_discovery import discover_splits
from lockgate.engine.runtime.job.state_queries import StateQueries
from lockgate.engine.runtime.metrics import JobMetrics
from lockgate.engine.runtime.metrics.view import MetricsView
from lockgate.engine.savepoints.values import ValueCodec
from lockgate.engine.state.local_state import claimed_local_state
from lockgate.engine.state.native_snapshot import NativeRestoreTarget
from lockgate.engine.time.clock import wall_time_of

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
    ``cancel`` stops the current attempt, or the wait for the next; ``run`` then returns
    ``False``, also when an attempt that would restart was failing meanwhile. Every failed
    attempt is in ``failures`` and each lifecycle step goes to ``events`` (a log record and
    a typed event) as it happens, before any restart delay; ``state_queries`` reads keyed
    state from the attempt that runs. ``executor`` hosts each attempt's subtasks
    (``LocalExecutor``: on this loop).
    """

    def __init__(
        self,
        name: str,
        plan: ExecutionPlan,
        options: RuntimeOptions,
        settings: JobSettings,
        executor: Executor | None = None,
    ) -> None:
        self.name = name
        self.executor = executor or LocalExecutor()
        self.plan = plan
        self.options = options
        self.settings = settings
        self.store = CompletedCheckpointStore(settings.checkpoints.max_retained)
        self.statistics = CheckpointStatistics()
        self.metrics_view = MetricsView(name, plan, options.clock)
        self.registry = SharedStateRegistry()
        self.files = CheckpointFiles(name, settings.storage, self.registry)
        self.attempt_number = 0
        self.run_id = uuid.uuid4().hex[:12]
        self.failures: list[JobFailure] = []
        self.events = JobEvents(name, wall_clock=wall_time_of(options.clock))
        self.state_queries = StateQueries(name, plan, options.max_parallelism, self.events)
        restore = settings.restore
        self._next_checkpoint_id = 1 + (restore.metadata.checkpoint_id if restore else 0)
        self._restore = restore  # what the next attempt restores from
        if restore is not None and restore.claim:
            claimed = _claimed(restore)
            self.store.recover(claimed)
            for checkpoint in claimed:  # their shared files are the job's now
                self.registry.register(checkpoint.metadata)
        self._hosted: HostedAttempt | None = None
        self._system: ActorSystem | None = None
        self._coordinator = CoordinatorSlot(name)
        self._coordinator_actor: CheckpointCoordinator | None = None
        self._ended = False
        self._cancelled = False
        self._killed: JobError | None = None  # fail_attempt's failure, raised by the attempt
        self._restart_wait: anyio.CancelScope | None = None
        self._discovery: anyio.CancelScope | None = None

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
                finished = await self._run_attempts()
        except Exception as failure:
            self._record_failure(failure)
            self.events.failed(self.attempt_number, failure)
            raise
        else:
            ended = self.events.finished if finished else self.events.canceled
            ended(self.attempt_number)
            return finished
        finally:
            self._ended = True
            self.state_queries.close()
            self._coordinator.close()
            self.events.close()  # also when the host cancelled the job's task

    async def _run_attempts(self) -> bool:
        tracker = self.settings.restart_strategy.tracker()
        while True:
            try:
                return await self._run_attempt()
            except Exception as failure:
                delay = self._on_failure(failure, tracker.on_failure)
                if delay is None:  # the last failure fails the job, cancelled meanwhile or not
                    raise
            if not await self._wait_to_restart(delay):
                return False
            self.attempt_number += 1
            latest = self.store.latest
            if latest is not None and (
                self._restore is None or latest.metadata is not self._restore.metadata
            ):
                self._restore = self._own_checkpoint(latest.metadata, latest.location)

    def _record_failure(self, failure: Exception) -> None:
        # Once per failure: a run that fails before its first attempt (its storage refused
        # it) has a failure too, and an attempt's failure that ends the job is not counted twice.
        if not self.failures or self.failures[-1].exception is not failure:
            now = self.events.wall_clock()
            self.failures.append(JobFailure(self.attempt_number, now, failure))

    def _on_failure(
        self, failure: Exception, restart: Callable[[float], float | None]
    ) -> float | None:
        # Recorded and reported before the restart delay, so a job failing in every attempt
        # shows it from its first failure on. Only a JobError is worth another attempt. As in
        # Flink, a failure that would restart the job ends a job cancelled meanwhile CANCELED,
        # and one that ends it (no restart left) FAILED.
        self._record_failure(failure)
        delay = restart(self.options.clock.now()) if isinstance(failure, JobError) else None
        if delay is not None and not self._cancelled:
            self.events.restarting(self.attempt_number, failure, delay)
        return delay

    async def _wait_to_restart(self, delay: float) -> bool:
        """Wait ``delay`` seconds on the job's clock; return ``False`` if cancelled meanwhile."""
        if self._cancelled:
            return False
        with anyio.CancelScope() as self._restart_wait:
            await self.options.clock.sleep(delay)
        self._restart_wait = None
        return not self._cancelled

    def cancel(self) -> None:
        """Stop the current attempt's subtasks, or the wait for the next attempt; start no other."""
        self._cancelled = True
        if self._system is not None:
            self._system.cancel()
        if self._restart_wait is not None:
            self._restart_wait.cancel()
        if self._discovery is not None:
            self._discovery.cancel()

    def fail_attempt(self, failure: JobError) -> bool:
        """Fail the running attempt with ``failure``, as a crash would; ``False`` if none runs.

        Fault injection: the attempt's subtasks are cancelled and ``failure`` is the
        attempt's, so the restart strategy decides what follows, as after any failure.
        """
        if self._system is None or self._killed is not None or self._cancelled:
            return False
        self._killed = failure
        self._system.cancel()
        return True

    async def trigger_checkpoint(self, request: Any = None) -> CheckpointTicket:
        """Start a checkpoint (or ``request``) once the current attempt runs.

        ``request`` is a ``CheckpointRequest`` (the default: a checkpoint) or a
        ``StopRequest``; the ticket resolves when the snapshot completed or failed. Asked
        while an attempt fails, restarts or restores, the request goes to the next attempt.
        """
        ticket: CheckpointTicket = await self._coordinator.ask(
            CheckpointRequest() if request is None else request
        )
        return ticket

    def metrics(self) -> JobMetrics:
        """Return every subtask's metrics and the checkpoint statistics now."""
        counters = () if self._hosted is None else self._hosted.statistics()
        snapshot = self.statistics.snapshot()
        return self.metrics_view.read(counters, snapshot, attempt=self.attempt_number)

    async def _run_attempt(self) -> bool:
        if not self._cancelled:  # as in Flink, the job runs from here; its subtasks restore
            self.events.started(self.attempt_number)
        restored = await self._load_restored()
        self._report_restored()
        failure: BaseException | None = None
        try:
            if not await self._discover_splits(restored):
                return False
            async with self.executor.host(self.name) as host, ActorSystem(self.name) as system:
                self._system = system
                try:
                    await self._deploy(system, host, restored)
                except Exception as error:  # a source or sink refused to start
                    failure = error
                    system.cancel()
                if self._cancelled:
                    system.cancel()
        except ActorCrashed as crash:
            failure = _job_failure(crash)
        finally:
            discard_downloads(restored)  # files downloaded for operators never built
            self.state_queries.ended()
            self._system = None
            self._coordinator.fill(None)
            if self._coordinator_actor is not None:
                self._next_checkpoint_id = self._coordinator_actor.next_checkpoint_id
        failure, self._killed = failure or self._killed, None
        if failure is not None:
            raise failure
        return not self._cancelled

    async def _discover_splits(self, restored: dict[str, Any]) -> bool:
        """Let the sources look up their splits; return ``False`` if ``cancel`` ended that."""
        with anyio.CancelScope() as discovery:
            self._discovery = discovery
            if self._cancelled:
                discovery.cancel()
            await discover_splits(self.plan, restored)
        self._discovery = None
        return not discovery.cancelled_caught

    def _own_checkpoint(self, metadata: CheckpointMetadata, location: str) -> RestoreSettings:
        first = self.settings.restore
        return RestoreSettings(
            metadata,
            self.settings.storage,
            location,
            allow_non_restored_state=first is not None and first.allow_non_restored_state,
            own_checkpoint=True,
            fall_back=True,
        )

    async def _load_restored(self) -> dict[str, Any]:
        if self._restore is None:
            return {}
        self._restore, restored = await load_newest_restorable(self.name, self._restore, self._load)
        return restored

    async def _load(self, restore: RestoreSettings) -> dict[str, Any]:
        backend = self.options.state_backend
        return await load_restored_state(
            restore,
            self.plan,
            self.options.max_parallelism,
            codec=self.settings.savepoint_codec,
            native_target=backend if isinstance(backend, NativeRestoreTarget) else None,
        )

    def _report_restored(self) -> None:
        restore = self._restore
        if restore is not None:
            self.events.restored(
                self.attempt_number,
                restore.metadata.checkpoint_id,
                restore.location,
                is_savepoint=restore.metadata.is_savepoint,
            )

    async def _deploy(
        self, system: ActorSystem, host: AttemptHost, restored: dict[str, Any]
    ) -> None:
        coordinator = self._coordinator_actor = CheckpointCoordinator(self._coordinator_setup())
        coordinator_ref = system.spawn(coordinator, name="coordinator")
        self._coordinator.fill(coordinator_ref)
        attempt = Attempt(
            self.name,
            self.attempt_number,
            self.settings.storage,
            coordinator_ref,
            restored,
            run_id=self.run_id,
            savepoint_codec=self.settings.savepoint_codec,
        )
        self._hosted = hosted = await host.deploy(system, self.plan, self.options, attempt)
        coordinator_ref.tell_control(AttemptDeployed(hosted.subtasks, hosted.sources))
        hosted.start()
        self.state_queries.deployed(hosted.subtasks)

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
            files=self.files,
            listener=self.events,
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
    if isinstance(cause, JobError | RestoreError | StateEncodingError | AsyncioRequired):
        return cause  # a restore, encoding or event-loop error is not retried: it would come back
    if isinstance(cause, EngineError):
        error: JobError = JobError(f"actor {crash.actor} failed: {cause}")
    else:
        error = JobError(f"subtask {crash.actor} failed outside user code: {cause!r}")
    error.__cause__ = cause
    return error
