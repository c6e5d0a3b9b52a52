"""ProcessHost: one attempt's subtasks deployed on worker processes that are connected."""

from __future__ import annotations

import secrets
import sys
from dataclasses import replace
from typing import Any

from lockgate.actors import ActorRef, ActorSystem
from lockgate.engine.checkpointing.messages import SubtaskId
from lockgate.engine.errors import JobError
from lockgate.engine.graph.job_graph import OperatorKind
from lockgate.engine.graph.planning import ExecutionPlan, OperatorChain
from lockgate.engine.runtime.executors.control_messages import Connect, Deploy, Start
from lockgate.engine.runtime.executors.executor import AttemptHost, HostedAttempt
from lockgate.engine.runtime.executors.shipping import DriverObjects, ship
from lockgate.engine.runtime.executors.worker_deployment import WorkerDeployment
from lockgate.engine.runtime.executors.worker_link import RemoteSubtask, WorkerEnd, WorkerLink
from lockgate.engine.runtime.job.deployment import Attempt, RuntimeOptions
from lockgate.engine.runtime.metrics.counters import SubtaskCounters

__all__ = ["ProcessHost"]


class ProcessHost(AttemptHost):
    """Deploys an attempt on connected workers: each builds the subtasks placed on it.

    Every worker gets the same shipped deployment; ``deploy`` returns once each built its
    subtasks (or raises the first failure), with a ``RemoteSubtask`` ref for every subtask.
    The subtasks run from ``HostedAttempt.start`` on, once the coordinator knows them.
    """

    def __init__(
        self,
        ends: list[WorkerEnd],
        *,
        data_addresses: tuple[str, ...],
        heartbeat_interval: float,
        heartbeat_timeout: float,
    ) -> None:
        self._ends = ends
        self._addresses = data_addresses
        self._interval = heartbeat_interval
        self._timeout = heartbeat_timeout
        self._objects = DriverObjects()

    async def deploy(
        self, system: ActorSystem, plan: ExecutionPlan, options: RuntimeOptions, attempt: Attempt
    ) -> HostedAttempt:
        """Ship the attempt to every worker; wait until each built its subtasks."""
        objects = self._objects
        deployment = WorkerDeployment.of(plan, options, attempt, self._interval)
        payload = _shipped(deployment, objects, attempt)
        token = secrets.token_bytes(16)  # workers of this attempt show it to each other
        message = Deploy(payload, tuple(sys.path), self._addresses, token)
        links = [self._link(system, plan, end, objects, attempt.coordinator) for end in self._ends]
        for link in links:
            link.send(message)
        await _every(links, "listening")
        for link in links:
            link.send(Connect())
        await _every(links, "deployed")
        refs = _remote_subtasks(system, plan, links)
        return HostedAttempt(
            refs,
            frozenset(s for s in refs if _chain(plan, s).head.kind is OperatorKind.SOURCE),
            lambda: _in_plan_order(plan, links),
            start=lambda: _start(links),
        )

    async def release(self) -> None:
        """Tell every ``DriverSide`` object the attempt shipped that its workers are gone."""
        for value in self._objects.values():
            await value.workers_gone()

    def _link(
        self,
        system: ActorSystem,
        plan: ExecutionPlan,
        end: WorkerEnd,
        objects: DriverObjects,
        coordinator: ActorRef[Any],
    ) -> WorkerLink:
        assert plan.placement is not None
        names = tuple(
            _display_name(_chain(plan, SubtaskId(*slot)), slot[1])
            for slot in plan.placement.subtasks_of(end.worker)
        )
        link = WorkerLink(
            replace(end, subtasks=names), objects, coordinator, heartbeat_timeout=self._timeout
        )
        system.spawn(link, name=f"worker {end.worker}")
        return link


async def _every(links: list[WorkerLink], step: str) -> None:
    # Wait until every worker got to ``step``; raise the first deployment failure.
    for link in links:
        await getattr(link, step).wait()
        if link.deploy_failure is not None:
            raise link.deploy_failure


def _shipped(deployment: WorkerDeployment, objects: DriverObjects, attempt: Attempt) -> bytes:
    try:
        return ship(deployment, objects)
    except Exception as error:  # what submission did not check: restored state, options
        raise JobError(
            f"attempt {attempt.number} of job '{attempt.job_name}' cannot be shipped to its "
            f"worker processes: {type(error).__name__}: {error}"
        ) from error


def _remote_subtasks(
    system: ActorSystem, plan: ExecutionPlan, links: list[WorkerLink]
) -> dict[SubtaskId, ActorRef[Any]]:
    placement = plan.placement
    assert placement is not None
    return {
        SubtaskId(chain.chain_id, index): system.spawn(
            RemoteSubtask(
                SubtaskId(chain.chain_id, index), links[placement.worker_of(chain.chain_id, index)]
            ),
            name=_display_name(chain, index),
        )
        for chain in plan.chains
        for index in range(chain.parallelism)
    }


def _start(links: list[WorkerLink]) -> None:
    for link in links:
        link.send(Start())


def _chain(plan: ExecutionPlan, subtask: SubtaskId) -> OperatorChain:
    return plan.chains[subtask.chain_id]


def _display_name(chain: OperatorChain, index: int) -> str:
    # As SubtaskActor.display_name: the coordinator's messages name subtasks the same way.
    return f"{chain.name!r} {index + 1}/{chain.parallelism}"


def _in_plan_order(plan: ExecutionPlan, links: list[WorkerLink]) -> tuple[SubtaskCounters, ...]:
    order = {
        (chain.uids, index): position
        for position, (chain, index) in enumerate(
            (chain, index) for chain in plan.chains for index in range(chain.parallelism)
        )
    }
    metrics = [m for link in links for m in link.metrics]
    return tuple(sorted(metrics, key=lambda m: order.get((m.uids, m.subtask_index), 0)))
