"""Planning: chain operators into tasks, then expand tasks into subtasks and channels.

Two connected operators share a chain (one ``SubtaskActor`` runs both, passing batches by
plain function calls) when the edge between them is the downstream operator's only input
and the upstream operator's only output, both have the same parallelism, records would
not move between subtasks (the edge is forward, or both sides have parallelism 1), and the
edge carries the main output: a side output edge never chains, so an operator whose side
outputs are read ends its chain. Neither side may have asked otherwise: the downstream
operator's ``ChainingStrategy`` must be ``ALWAYS`` (not ``start_new_chain()`` or
``disable_chaining()``), the upstream one's not ``NEVER`` (``disable_chaining()``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.graph.job_graph import (
    ChainingStrategy,
    Edge,
    JobGraph,
    OperatorKind,
    OperatorNode,
    Partitioning,
)
from lockgate.engine.graph.placement import Placement, place_subtasks
from lockgate.engine.graph.record_timestamps import settle_timestamps

__all__ = ["ChainEdge", "ChannelSpec", "ExecutionPlan", "OperatorChain", "plan_job"]


@dataclass(frozen=True, eq=False)
class OperatorChain:
    """Operators that run together in one subtask actor, head first.

    Batches pass between chained operators by plain function calls; only the edges out of a
    chain go through channels.
    """

    chain_id: int
    operators: tuple[OperatorNode, ...]

    @property
    def parallelism(self) -> int:
        """How many subtasks run this chain."""
        return self.operators[0].parallelism

    @property
    def uids(self) -> tuple[str, ...]:
        """The uids of the chained operators, head first."""
        return tuple(node.uid for node in self.operators)

    @property
    def name(self) -> str:
        """A readable name: the chained operators' names joined by arrows."""
        return " -> ".join(node.name for node in self.operators)

    @property
    def head(self) -> OperatorNode:
        """The first operator: a source, or the one that reads the chain's input channels."""
        return self.operators[0]

    @property
    def tail(self) -> OperatorNode:
        """The last operator: a sink, or the one that feeds the chain's output channels."""
        return self.operators[-1]


@dataclass(frozen=True, eq=False)
class ChainEdge:
    """A data connection between two chains, with its partitioning.

    ``tag`` is the side output of the upstream chain's tail the edge carries, or ``None``
    for its main output.
    """

    edge_id: int
    upstream: OperatorChain
    downstream: OperatorChain
    partitioning: Partitioning
    key_selector: Callable[[Any], Any] | None
    tag: OutputTag[Any] | None = None

    def channels_of(self, upstream_index: int) -> list[int]:
        """The downstream subtask indexes one upstream subtask sends to, in channel order."""
        if self.partitioning is Partitioning.FORWARD:
            return [upstream_index]
        return list(range(self.downstream.parallelism))


@dataclass(frozen=True)
class ChannelSpec:
    """One channel: from a subtask of an edge's upstream chain to one of its downstream chain."""

    edge_id: int
    upstream_index: int
    downstream_index: int


@dataclass(frozen=True, eq=False)
class ExecutionPlan:
    """Chains, the edges between them, and every channel between their subtasks.

    ``str(plan)`` shows the chaining: one line per chain, one per edge between chains, then,
    when the plan is ``placed`` on worker processes, one per worker with the subtasks it hosts.
    """

    graph: JobGraph
    chains: tuple[OperatorChain, ...]
    edges: tuple[ChainEdge, ...]
    placement: Placement | None = None

    def placed(self, workers: int) -> ExecutionPlan:
        """This plan with its subtasks placed on ``workers`` processes (``Placement``)."""
        chains = ((chain.chain_id, chain.parallelism) for chain in self.chains)
        max_parallelism = self.graph.max_parallelism
        placement = place_subtasks(chains, workers=workers, max_parallelism=max_parallelism)
        return replace(self, placement=placement)

    def chain_of(self, uid: str) -> OperatorChain:
        """Return the chain that runs operator ``uid``."""
        for chain in self.chains:
            if uid in chain.uids:
                return chain
        raise KeyError(f"no operator with uid '{uid}' in the plan")

    def inputs(self, chain: OperatorChain) -> list[ChainEdge]:
        """Edges into ``chain``."""
        return [edge for edge in self.edges if edge.downstream is chain]

    def outputs(self, chain: OperatorChain) -> list[ChainEdge]:
        """Edges out of ``chain``."""
        return [edge for edge in self.edges if edge.upstream is chain]

    def channels(self) -> list[ChannelSpec]:
        """Every channel of the job, edge by edge."""
        return [
            ChannelSpec(edge.edge_id, upstream, downstream)
            for edge in self.edges
            for upstream in range(edge.upstream.parallelism)
            for downstream in edge.channels_of(upstream)
        ]

    @property
    def subtask_count(self) -> int:
        """How many subtask actors the job runs."""
        return sum(chain.parallelism for chain in self.chains)

    def describe(self) -> str:
        """Render the plan: one line per chain, then one per edge between chains."""
        lines = [f"chain {c.chain_id} x{c.parallelism}: {' -> '.join(c.uids)}" for c in self.chains]
        lines += [
            f"chain {e.upstream.chain_id} --{e.partitioning.value}{_label(e.tag)}--> "
            f"chain {e.downstream.chain_id}"
            for e in self.edges
        ]
        if self.placement is not None:
            lines.append(self.placement.describe())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.describe()


def plan_job(graph: JobGraph) -> ExecutionPlan:
    """Validate ``graph``, settle where records carry timestamps, chain and connect."""
    graph.validate()
    settle_timestamps(graph)
    chains = _chain(graph)
    chain_of = {node.node_id: chain for chain in chains for node in chain.operators}
    edges = tuple(
        ChainEdge(
            edge_id,
            chain_of[edge.source.node_id],
            chain_of[edge.target.node_id],
            edge.partitioning,
            edge.key_selector,
            edge.tag,
        )
        for edge_id, edge in enumerate(e for e in graph.edges if not _chainable(graph, e))
    )
    return ExecutionPlan(graph, tuple(chains), edges)


def _chain(graph: JobGraph) -> list[OperatorChain]:
    chains: list[OperatorChain] = []
    for node in graph.nodes:
        if _chained_to_upstream(graph, node):
            continue
        members = [node]
        while (follower := _chained_follower(graph, members[-1])) is not None:
            members.append(follower)
        chains.append(OperatorChain(len(chains), tuple(members)))
    return chains


def _chained_to_upstream(graph: JobGraph, node: OperatorNode) -> bool:
    inputs = graph.inputs(node)
    return len(inputs) == 1 and _chainable(graph, inputs[0])


def _chained_follower(graph: JobGraph, node: OperatorNode) -> OperatorNode | None:
    outputs = graph.outputs(node)
    if len(outputs) == 1 and _chainable(graph, outputs[0]):
        return outputs[0].target
    return None


def _chainable(graph: JobGraph, edge: Edge) -> bool:
    source, target = edge.source, edge.target
    return (
        len(graph.outputs(source)) == 1
        and len(graph.inputs(target)) == 1
        and source.parallelism == target.parallelism
        and target.kind is not OperatorKind.SOURCE
        and (edge.partitioning is Partitioning.FORWARD or source.parallelism == 1)
        and edge.tag is None
        and source.chaining is not ChainingStrategy.NEVER
        and target.chaining is ChainingStrategy.ALWAYS
    )


def _label(tag: OutputTag[Any] | None) -> str:
    return "" if tag is None else f"[{tag.name}]"
