"""LocalExecutor: every subtask on the event loop of the driving process (the default)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from lockgate.actors import ActorSystem
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.graph.job_graph import OperatorKind
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.runtime.executors.executor import AttemptHost, Executor, HostedAttempt
from lockgate.engine.runtime.job.deployment import Attempt, RuntimeOptions, deploy

__all__ = ["LocalExecutor"]


class LocalExecutor(Executor):
    """Runs every subtask as an actor on this event loop: one process, one core.

    Channels are in-process mailboxes and nothing is pickled, so any function, clock and
    checkpoint storage will do. The default executor.
    """

    def prepare(
        self, plan: ExecutionPlan, storage: CheckpointStorage, options: RuntimeOptions
    ) -> ExecutionPlan:
        """Every job can run here: return ``plan`` unplaced."""
        return plan

    @asynccontextmanager
    async def host(self, job_name: str) -> AsyncIterator[AttemptHost]:
        """The driving process hosts every attempt; nothing to start or stop."""
        yield _LocalHost()

    def __repr__(self) -> str:
        return "LocalExecutor()"


class _LocalHost(AttemptHost):
    async def deploy(
        self, system: ActorSystem, plan: ExecutionPlan, options: RuntimeOptions, attempt: Attempt
    ) -> HostedAttempt:
        deployment = deploy(plan, options, attempt)
        subtasks = {
            subtask.settings.subtask_id: system.spawn(
                subtask, name=subtask.display_name, doorbell=doorbell
            )
            for subtask, doorbell in deployment.subtasks
        }
        sources = frozenset(
            subtask.settings.subtask_id
            for subtask, _ in deployment.subtasks
            if subtask.settings.chain.head.kind is OperatorKind.SOURCE
        )
        actors = tuple(subtask for subtask, _ in deployment.subtasks)
        return HostedAttempt(subtasks, sources, lambda: tuple(a.statistics() for a in actors))
