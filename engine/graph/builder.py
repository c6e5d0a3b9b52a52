"""GraphBuilder: the job graph under construction, as the fluent API adds to it.

Pure and synchronous: it numbers operators, gives them their default uid, name and
parallelism, and adds operators and edges to one ``JobGraph``. The streams of one
environment share one builder, so the API family builds the graph without reaching into
the environment.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.graph.event_time import upstream_timestamp
from lockgate.engine.graph.job_graph import Edge, JobGraph, OperatorKind, OperatorNode, Partitioning

__all__ = ["GraphBuilder"]


class GraphBuilder:
    """Adds operators and edges to one job graph; operators get ids in the order added.

    ``parallelism`` is the default of operators added without one; changing it affects only
    operators added later. An operator without a uid gets ``<kind>-<id>``.
    """

    def __init__(self, *, parallelism: int, max_parallelism: int) -> None:
        self.parallelism = parallelism
        self.graph = JobGraph(max_parallelism)
        self._ids = itertools.count()

    def add_operator(
        self,
        kind: OperatorKind,
        function: Any,
        *,
        uid: str | None = None,
        name: str | None = None,
        parallelism: int | None = None,
    ) -> OperatorNode:
        """Add an operator of ``kind`` running ``function``; raise ``GraphError`` on bad options."""
        node_id = next(self._ids)
        resolved = uid or f"{kind.value}-{node_id}"
        node = OperatorNode(
            node_id=node_id,
            uid=resolved,
            name=name or resolved,
            kind=kind,
            function=function,
            parallelism=self.parallelism if parallelism is None else parallelism,
            uid_is_explicit=uid is not None,
        )
        return self.graph.add(node)

    def connect(
        self,
        source: OperatorNode,
        target: OperatorNode,
        partitioning: Partitioning,
        key_selector: Callable[[Any], Any] | None = None,
        tag: OutputTag[Any] | None = None,
    ) -> None:
        """Add the edge from ``source`` (its side output ``tag``, if given) to ``target``."""
        self.graph.connect(Edge(source, target, partitioning, key_selector, tag))

    def upstream_timestamp(
        self, inputs: Iterable[tuple[OperatorNode, OutputTag[Any] | None]]
    ) -> Callable[[Any], float] | str:
        """The timestamp assigner the records of ``inputs`` were read with, or why there is none."""
        return upstream_timestamp(self.graph, inputs)

    def __repr__(self) -> str:
        return f"<GraphBuilder operators={len(self.graph.nodes)} parallelism={self.parallelism}>"
