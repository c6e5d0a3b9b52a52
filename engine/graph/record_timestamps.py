"""Which operators handle records with timestamps at runtime: where something reads them.

Downstream of a watermark strategy every record has event time. It travels as a
``(timestamp, value)`` pair only where an operator downstream may read it before the next
strategy replaces it: a process function (``ctx.timestamp()``), a connected or broadcast
process function, a window (event-time windows place records by it; every window stamps
its results), an interval join (it joins by it and stamps each pair). Maps, filters,
rolling reduces, ``async_map`` and sinks never show it, so a strategy whose records reach
none of those readers emits plain values, and its stream pays nothing for timestamps. An
operator fed pairs by any input emits pairs. Pure: reads and sets the flags of the graph's
nodes.
"""

from __future__ import annotations

from functools import cache

from lockgate.engine.graph.job_graph import JobGraph, OperatorKind, OperatorNode

__all__ = ["TIMESTAMP_READERS", "settle_timestamps"]

TIMESTAMP_READERS = frozenset(
    {
        OperatorKind.PROCESS,
        OperatorKind.CO_PROCESS,
        OperatorKind.BROADCAST_PROCESS,
        OperatorKind.WINDOW,
        OperatorKind.INTERVAL_JOIN,
    }
)
"""The kinds whose user functions or logic may read a record's timestamp."""


def settle_timestamps(graph: JobGraph) -> None:
    """Set every node's ``timestamped`` and ``emits_timestamps`` (idempotent).

    A watermark strategy emits pairs if a reader follows it (through operators that are
    not strategies); any other operator emits pairs exactly when an input brings it pairs.
    """

    @cache
    def read_below(node: OperatorNode) -> bool:
        return any(
            edge.target.kind in TIMESTAMP_READERS or read_below(edge.target)
            for edge in graph.outputs(node)
            if edge.target.kind is not OperatorKind.TIMESTAMPS
        )

    @cache
    def emits(node: OperatorNode) -> bool:
        if node.kind is OperatorKind.TIMESTAMPS:
            return read_below(node)
        return receives(node)

    @cache
    def receives(node: OperatorNode) -> bool:
        return any(emits(edge.source) for edge in graph.inputs(node))

    for node in graph.nodes:
        node.timestamped = receives(node)
        node.emits_timestamps = emits(node)
