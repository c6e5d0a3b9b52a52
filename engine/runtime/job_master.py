"""JobMaster: runs a job attempt by attempt, restoring each from the latest checkpoint."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import anyio

from lockgate.actors import ActorCrashed, ActorSystem
from lockgate.engine.checkpointing.completed import (
    CheckpointStatistics,
    CompletedCheckpointStore,
)
from lockgate.engine.checkpointing.config import CheckpointConfig
from lockgate.engine.checkpointing.coordinator import (
    CheckpointCoordinator,
    CheckpointRequest,
    CheckpointTicket,
    CoordinatorSetup,
)
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.errors import EngineError, JobError
from lockgate.engine.graph import OperatorKind
from lockgate.engine.metrics import JobMetrics
from lockgate.engine.planning import ExecutionPlan
from lockgate.engine.restart import RestartStrategy
from lockgate.engine.runtime.deployment import Attempt, Deployment, RuntimeOptions, deploy
from lockgate.engine.runtime.restore_loader import load_restored_state
from lockgate.engine.runtime.scope import single_error

__all__ = ["JobMaster", "JobSettings"]


@dataclass(frozen=True, slots=True)
class JobSettings:
    """How a job checkpoints, where, how it restarts, and what it starts from."""

    checkpoints: CheckpointConfig
    storage: CheckpointStorage
    restart_strategy: RestartStrategy
    restore_from: CheckpointMetadata | None = None
    allow_non_restored_state: bool = False


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
        self.attempt_number = 0
        self.run_id = uuid.uuid4().hex[:12]
        self.failures: list[BaseException] = []
        self._next_checkpoint_id = 1 + (
            settings.restore_from.checkpoint_id if settings.restore_from else 0
        )
        self._restore_from = settings.restore_from
        self._deployment: Deployment | None = None
        self._system: ActorSystem | None = None
        self._coordinator: Any = None
        self._setup: CoordinatorSetup | None = None
        self._coordinator_ready = anyio.Event()
        self._ended = False
        self._cancelled = False

    async def run(self) -> bool:
        """Run the job to its end; return ``True`` if it finished, ``False`` if cancelled."""
        try:
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
            if latest is not None:
                self._restore_from = latest.metadata

    def cancel(self) -> None:
        """Stop every subtask of the current attempt now, and start no other."""
        self._cancelled = True
        if self._system is not None:
            self._system.cancel()

    async def trigger_checkpoint(self) -> CheckpointTicket:
        """Start a checkpoint once the current attempt runs; the ticket resolves with it."""
        while self._coordinator is None:
            if self._ended:
                raise JobError(f"job '{self.name}' has ended; no checkpoint can be taken")
            await self._coordinator_ready.wait()
        ticket: CheckpointTicket = await self._coordinator.ask_control(CheckpointRequest())
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
                self._deploy(system, restored)
                if self._cancelled:
                    system.cancel()
        except ActorCrashed as crash:
            failure = _job_failure(crash)
        finally:
            self._system = None
            self._coordinator = None
            self._coordinator_ready = anyio.Event()
            if self._setup is not None:
                self._next_checkpoint_id = self._setup.next_checkpoint_id
        if failure is not None:
            raise failure
        return not self._cancelled

    async def _load_restored(self) -> dict[str, Any]:
        if self._restore_from is None:
            return {}
        return await load_restored_state(
            self._restore_from,
            self.plan,
            self.settings.storage,
            self.options.max_parallelism,
            allow_non_restored_state=self.settings.allow_non_restored_state,
        )

    def _deploy(self, system: ActorSystem, restored: dict[str, Any]) -> None:
        setup = self._coordinator_setup()
        self._coordinator = system.spawn(CheckpointCoordinator(setup), name="coordinator")
        self._coordinator_ready.set()
        attempt = Attempt(
            self.name,
            self.attempt_number,
            self.settings.storage,
            self._coordinator,
            restored,
            run_id=self.run_id,
        )
        self._deployment = deploy(self.plan, self.options, attempt)
        for subtask, doorbell in self._deployment.subtasks:
            ref = system.spawn(subtask, name=repr(subtask), doorbell=doorbell)
            setup.subtasks[subtask.settings.subtask_id] = ref
        setup.sources = frozenset(
            subtask.settings.subtask_id
            for subtask, _ in self._deployment.subtasks
            if subtask.settings.chain.head.kind is OperatorKind.SOURCE
        )

    def _coordinator_setup(self) -> CoordinatorSetup:
        setup = CoordinatorSetup(
            job_name=self.name,
            config=self.settings.checkpoints,
            storage=self.settings.storage,
            store=self.store,
            statistics=self.statistics,
            clock=self.options.clock,
            max_parallelism=self.options.max_parallelism,
            operator_parallelism={node.uid: node.parallelism for node in self.plan.graph},
            next_checkpoint_id=self._next_checkpoint_id,
        )
        self._setup = setup
        return setup


def _job_failure(crash: ActorCrashed) -> BaseException:
    cause = crash.__cause__
    if isinstance(cause, BaseExceptionGroup):
        cause = single_error(cause)
    if isinstance(cause, JobError):
        return cause
    if isinstance(cause, EngineError):
        error: JobError = JobError(f"actor '{crash.actor}' failed: {cause}")
    else:
        error = JobError(f"subtask '{crash.actor}' failed outside user code: {cause!r}")
    error.__cause__ = cause
    return error
