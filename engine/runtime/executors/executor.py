"""Executor: where an attempt's subtasks run; what the job master asks of one."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from lockgate.actors import ActorRef, ActorSystem
from lockgate.engine.checkpointing.messages import SubtaskId
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.runtime.job.deployment import Attempt, RuntimeOptions
from lockgate.engine.runtime.metrics.counters import SubtaskCounters

__all__ = ["AttemptHost", "Executor", "HostedAttempt"]


@dataclass(frozen=True, slots=True)
class HostedAttempt:
    """An attempt's subtasks as the coordinator reaches them, wherever they run.

    ``subtasks`` maps every subtask of the plan to a ref in the driving process's actor
    system (the subtask itself, or its proxy); ``statistics`` returns their latest metrics.
    ``start`` is called once the coordinator knows the subtasks: none of them tells it
    anything before (local subtasks run as soon as the job master's task yields).
    """

    subtasks: Mapping[SubtaskId, ActorRef[Any]]
    sources: frozenset[SubtaskId]
    statistics: Callable[[], tuple[SubtaskCounters, ...]]
    start: Callable[[], None] = lambda: None


class AttemptHost(ABC):
    """What hosts the subtasks of one attempt, for as long as its ``async with`` lasts."""

    @abstractmethod
    async def deploy(
        self, system: ActorSystem, plan: ExecutionPlan, options: RuntimeOptions, attempt: Attempt
    ) -> HostedAttempt:
        """Build and start every subtask of ``plan`` for ``attempt``; reach them via ``system``.

        Raises what a source or sink raised when it was built (the attempt then fails).
        """


class Executor(ABC):
    """Runs the subtasks of each attempt of a job; the job master and coordinator stay here.

    ``prepare`` checks at submission that the job can run on this executor and returns its
    plan as placed on it; ``host`` is entered once per attempt and, when it is left, nothing
    of the attempt runs any more.
    """

    @abstractmethod
    def prepare(
        self, plan: ExecutionPlan, storage: CheckpointStorage, options: RuntimeOptions
    ) -> ExecutionPlan:
        """Return ``plan`` placed on this executor, or raise why the job cannot run here."""

    @abstractmethod
    def host(self, job_name: str) -> AbstractAsyncContextManager[AttemptHost]:
        """Where the next attempt of ``job_name`` runs, from entry to exit."""
