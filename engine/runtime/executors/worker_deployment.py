"""WorkerDeployment: what a worker process gets to build its subtasks of one attempt."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lockgate.actors import ActorRef
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.runtime.job.deployment import Attempt, RuntimeOptions
from lockgate.engine.savepoints.values import ValueCodec

__all__ = ["WorkerDeployment"]


@dataclass(frozen=True)
class WorkerDeployment:
    """The attempt as every worker gets it: the placed plan, the options, the state.

    Each worker builds the subtasks ``plan.placement`` gives it, with the same plan, options
    and restored state as the others; only the coordinator is the worker's own proxy.
    """

    plan: ExecutionPlan
    options: RuntimeOptions
    job_name: str
    attempt: int
    storage: CheckpointStorage
    run_id: str
    savepoint_codec: ValueCodec
    restored: Mapping[str, list[OperatorSnapshot]] = field(default_factory=dict)
    heartbeat_interval: float = 0.5

    @classmethod
    def of(
        cls, plan: ExecutionPlan, options: RuntimeOptions, attempt: Attempt, heartbeat: float
    ) -> WorkerDeployment:
        """The deployment of ``attempt`` of ``plan`` (without its coordinator ref)."""
        return cls(
            plan,
            options,
            attempt.job_name,
            attempt.number,
            attempt.storage,
            attempt.run_id,
            attempt.savepoint_codec,
            dict(attempt.restored),
            heartbeat,
        )

    def attempt_with(self, coordinator: ActorRef[Any]) -> Attempt:
        """The attempt, its subtasks reporting to ``coordinator``."""
        return Attempt(
            self.job_name,
            self.attempt,
            self.storage,
            coordinator,
            self.restored,
            run_id=self.run_id,
            savepoint_codec=self.savepoint_codec,
        )

    def peers(self, worker: int) -> frozenset[int]:
        """The other workers that worker ``worker`` has a channel with, either way."""
        placement = self.plan.placement
        assert placement is not None, "a worker's plan is placed"
        edges = {edge.edge_id: edge for edge in self.plan.edges}
        pairs = {
            (
                placement.worker_of(edges[spec.edge_id].upstream.chain_id, spec.upstream_index),
                placement.worker_of(edges[spec.edge_id].downstream.chain_id, spec.downstream_index),
            )
            for spec in self.plan.channels()
        }
        return frozenset(
            other for pair in pairs if worker in pair for other in pair if other != worker
        )

    def worker_of(self, chain_id: int, index: int) -> int:
        """The worker hosting subtask ``index`` of chain ``chain_id``."""
        placement = self.plan.placement
        assert placement is not None, "a worker's plan is placed"
        return placement.worker_of(chain_id, index)

    def hosts(self, worker: int) -> frozenset[tuple[int, int]]:
        """The subtasks, as ``(chain_id, index)``, worker ``worker`` builds."""
        placement = self.plan.placement
        assert placement is not None, "a worker's plan is placed"
        return frozenset(placement.subtasks_of(worker))
