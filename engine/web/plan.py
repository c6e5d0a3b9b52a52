"""plan_document: a job's execution plan as JSON-ready data, as the REST API shows it ☐."""

from __future__ import annotations

from typing import Any

from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.graph.planning import ChainEdge, ExecutionPlan, OperatorChain

__all__ = ["plan_document"]


def plan_document(plan: ExecutionPlan) -> dict[str, Any]:
    """The chains (each with its operators, head first) and the edges between them.

    Chains and edges keep the plan's ids: an edge's ``source`` and ``target`` are chain ids,
    and ``/vertices`` reports each chain under the same id.
    """
    return {
        "chains": [_chain(chain) for chain in plan.chains],
        "edges": [_edge(edge) for edge in plan.edges],
    }


def _chain(chain: OperatorChain) -> dict[str, Any]:
    return {
        "id": chain.chain_id,
        "name": chain.name,
        "parallelism": chain.parallelism,
        "operators": [_operator(node) for node in chain.operators],
    }


def _operator(node: OperatorNode) -> dict[str, Any]:
    return {
        "uid": node.uid,
        "name": node.name,
        "kind": node.kind.value,
        "parallelism": node.parallelism,
    }


def _edge(edge: ChainEdge) -> dict[str, Any]:
    return {
        "id": edge.edge_id,
        "source": edge.upstream.chain_id,
        "target": edge.downstream.chain_id,
        "partitioning": edge.partitioning.name,
        "side_output": None if edge.tag is None else edge.tag.name,
    }
