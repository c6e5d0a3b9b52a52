"""GraphBuilder: the job graph under construction, as the fluent API adds to it.

Pure and synchronous: it numbers operators, gives them their default uid, name and
parallelism, and adds operators and edges to one ``JobGraph``. The streams of one
environment share one builder, so the API family builds the graph without reaching into
the environment.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from lockgate.engine.errors import GraphError
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.functions.two_inputs import SecondInput
from lockgate.engine.graph.job_graph import (
    ChainingStrategy,
    Edge,
    JobGraph,
    OperatorKind,
    OperatorNode,
    Partitioning,
    side_output_problem,
)

__all__ = ["GraphBuilder", "Producer"]


class Producer(NamedTuple):
    """An operator whose output a stream carries: its main output, or its side output ``tag``."""

    node: OperatorNode
    tag: OutputTag[Any] | None = None


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

    def connect_all(
        self,
        producers: Iterable[Producer],
        target: OperatorNode,
        partitioning: Partitioning | None,
        key_selector: Callable[[Any], Any] | None,
    ) -> None:
        """Connect every producer to ``target``; with no partitioning, forward where possible.

        An edge without a partitioning forwards between equal parallelisms (so the two
        operators chain) and rebalances between different ones.
        """
        for source, tag in producers:
            kind = partitioning or (
                Partitioning.FORWARD
                if source.parallelism == target.parallelism
                else Partitioning.REBALANCE
            )
            self.connect(source, target, kind, key_selector, tag)

    def add_second_input_marker(
        self, target: OperatorNode, producers: Sequence[Producer]
    ) -> Producer:
        """Add the map that marks the records of ``producers`` as ``target``'s second input."""
        # The map chains to the producers' operator (same parallelism, forward); the edge
        # from it to the target keeps the second stream's partitioning, its key read through
        # the mark.
        marker = self.add_operator(
            OperatorKind.MAP,
            SecondInput,
            uid=f"{target.uid}-second-input",
            name=f"{target.name} second input",
            parallelism=producers[0].node.parallelism,
        )
        self.connect_all(producers, marker, None, None)
        return Producer(marker)

    def side_producer(
        self, producers: Sequence[Producer], tag: OutputTag[Any], *, partitioned: bool
    ) -> Producer:
        """The side output ``tag`` of the one operator whose main output ``producers`` is.

        Raises:
            GraphError: naming the uid, when the stream is not the main, unpartitioned
                output of one operator that may send records to ``tag``.
        """
        problem = _side_stream_problem(producers, tag, partitioned=partitioned)
        if problem is not None:
            raise GraphError(problem)
        return Producer(producers[0].node, tag)

    def set_chaining(
        self, producers: Sequence[Producer], strategy: ChainingStrategy, *, partitioned: bool
    ) -> None:
        """Chain the one operator whose main output ``producers`` is as ``strategy`` says.

        Raises:
            GraphError: naming the uid, when the stream is not the main, unpartitioned
                output of one operator.
        """
        problem = _chaining_problem(producers, _CHAINING_METHODS[strategy], partitioned=partitioned)
        if problem is not None:
            raise GraphError(problem)
        producers[0].node.chaining = strategy

    def event_time_problem(self, producers: Sequence[Producer]) -> str | None:
        """Why the records of ``producers`` carry no timestamps, or ``None`` if they do.

        Records carry the timestamps a watermark strategy upstream gave them; in a union,
        it is enough that one input does (a record of another then fails where its event
        time is read, as in Flink).
        """
        if any(producer.node.emits_event_time for producer in producers):
            return None
        uids = ", ".join(f"'{p.node.uid}'" for p in producers)
        return (
            f"the records of {uids} carry no timestamps: no watermark strategy is upstream; "
            "give from_source(..., watermark_strategy=...), or call "
            "assign_timestamps_and_watermarks() before it, or use a processing-time window"
        )

    def __repr__(self) -> str:
        return f"<GraphBuilder operators={len(self.graph.nodes)} parallelism={self.parallelism}>"


def _side_stream_problem(
    producers: Sequence[Producer], tag: object, *, partitioned: bool
) -> str | None:
    uids = ", ".join(f"'{p.node.uid}'" for p in producers)
    if not isinstance(tag, OutputTag):
        return f"side_output() of {uids} needs an OutputTag; got {tag!r}"
    if len(producers) != 1:
        return (
            f"side_output({tag!r}) needs the stream of one operator; got a union of {uids}; "
            "call side_output() on each stream before union()"
        )
    node, own_tag = producers[0]
    if own_tag is not None:
        return (
            f"side_output({tag!r}) of operator '{node.uid}': this stream is its side output "
            f"{own_tag!r}, which has no side outputs; call side_output() on the stream the "
            "operator's method returned"
        )
    if partitioned:
        return (
            f"side_output({tag!r}) of operator '{node.uid}' needs the stream the operator's "
            "method returned; call side_output() on it before key_by(), rebalance(), "
            "broadcast() or forward()"
        )
    return side_output_problem(node, tag)


_CHAINING_METHODS = {
    ChainingStrategy.ALWAYS: "the default chaining",
    ChainingStrategy.HEAD: "start_new_chain()",
    ChainingStrategy.NEVER: "disable_chaining()",
}


def _chaining_problem(
    producers: Sequence[Producer], method: str, *, partitioned: bool
) -> str | None:
    if len(producers) != 1:
        uids = ", ".join(f"'{p.node.uid}'" for p in producers)
        return (
            f"{method} needs the stream of one operator; got a union of {uids}; call it on "
            "each stream before union()"
        )
    node, tag = producers[0]
    if tag is not None or partitioned:
        what = f"its side output {tag!r}" if tag is not None else "a partitioned stream"
        return (
            f"{method} of operator '{node.uid}' needs the stream the operator's method "
            f"returned; got {what}; call {method} on it before key_by(), rebalance(), "
            "broadcast(), forward() or side_output()"
        )
    return None
