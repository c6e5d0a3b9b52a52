"""Where a window's records get their event time: the watermark strategy upstream.

Records carry no timestamp of their own through the engine, so a window reads event time
with the timestamp assigner of the strategy that made the watermarks it fires on, found by
walking upstream through operators that pass records on unchanged (``filter``; partitioning
such as ``key_by`` is an edge, not an operator). Any other operator on the way changes the
records, and the window needs ``timestamp=`` instead. Pure: reads the job graph only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.graph.job_graph import JobGraph, OperatorKind, OperatorNode

__all__ = ["upstream_timestamp"]

Assigner = Callable[[Any], float]


def upstream_timestamp(
    graph: JobGraph, inputs: Iterable[tuple[OperatorNode, OutputTag[Any] | None]]
) -> Assigner | str:
    """The timestamp assigner the records of ``inputs`` were read with, or why there is none."""
    found: dict[int, tuple[Assigner, str]] = {}
    for node, tag in inputs:
        reached = _walk(graph, node, tag)
        if isinstance(reached, str):
            return reached
        for assigner, uid in reached:
            found.setdefault(id(assigner), (assigner, uid))
    if len(found) > 1:
        uids = ", ".join(f"'{uid}'" for _, uid in found.values())
        return (
            f"its records get event time from different timestamp assigners (of {uids}), and "
            "the window cannot tell which record came from where; give window(..., "
            "timestamp=lambda record: ...)"
        )
    if not found:
        return "no input"  # unreachable: every stream starts at a source
    return next(iter(found.values()))[0]


def _walk(
    graph: JobGraph, node: OperatorNode, tag: OutputTag[Any] | None
) -> list[tuple[Assigner, str]] | str:
    if tag is not None:
        return (
            f"it reads side output {tag.name!r} of operator '{node.uid}', whose records have no "
            "event time the window can read; give window(..., timestamp=lambda record: ...)"
        )
    if node.kind is OperatorKind.TIMESTAMPS:
        return [(node.function.timestamp_assigner, node.uid)]
    if node.kind is OperatorKind.SOURCE:
        return (
            f"source '{node.uid}' has no watermark strategy, so records have no event time and "
            "no watermark will fire the window; give from_source(..., watermark_strategy=...), "
            "or use a processing-time window"
        )
    if node.kind is not OperatorKind.FILTER:
        return (
            f"operator '{node.uid}' ({node.kind.value}) changes the records after their event "
            "time was assigned; give window(..., timestamp=lambda record: ...), or call "
            f"assign_timestamps_and_watermarks() after '{node.uid}'"
        )
    found: list[tuple[Assigner, str]] = []
    for edge in graph.inputs(node):
        reached = _walk(graph, edge.source, edge.tag)
        if isinstance(reached, str):
            return reached
        found.extend(reached)
    return found
