"""Which operators' records carry timestamps: those downstream of a watermark strategy."""

from __future__ import annotations

from typing import Any

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import OutputTag, StreamEnvironment, WatermarkStrategy
from lockgate.engine.graph.job_graph import Edge, JobGraph, OperatorKind, OperatorNode, Partitioning

STRATEGY = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(float)
SIDE = OutputTag[Any]("side")


def timestamped(env: StreamEnvironment) -> dict[str, bool]:
    return {node.uid: node.timestamped for node in env.plan().graph.nodes}


def test_operators_downstream_of_a_watermark_strategy_are_timestamped() -> None:
    env = StreamEnvironment()
    source = env.from_source(CollectionSource([1]), uid="plain")
    mapped = source.map(float, uid="before").assign_timestamps_and_watermarks(STRATEGY, uid="ts")
    mapped.map(float, uid="after").sink_to(CollectSink(), uid="out")

    assert timestamped(env) == {
        "plain": False,
        "before": False,
        "ts": False,  # its input carries none; what it emits does
        "after": True,
        "out": True,
    }


def test_a_union_with_one_input_with_event_time_is_timestamped() -> None:
    env = StreamEnvironment()
    stamped = env.from_source(CollectionSource([1]), uid="a", watermark_strategy=STRATEGY)
    plain = env.from_source(CollectionSource([2]), uid="b")
    plain.union(stamped).map(float, uid="both").sink_to(CollectSink(), uid="out")

    assert timestamped(env)["both"] is True
    assert timestamped(env)["b"] is False


def test_a_side_output_of_an_operator_with_event_time_is_timestamped() -> None:
    env = StreamEnvironment()
    stamped = env.from_source(CollectionSource([1]), uid="a", watermark_strategy=STRATEGY)
    calls = stamped.async_map(_same, on_failure=SIDE, uid="calls")
    calls.sink_to(CollectSink(), uid="out")
    calls.side_output(SIDE).map(float, uid="failed").sink_to(CollectSink(), uid="side")

    assert timestamped(env)["failed"] is True


def test_a_job_without_a_watermark_strategy_has_no_timestamped_operator() -> None:
    env = StreamEnvironment()
    source = env.from_source(CollectionSource([1]), uid="plain")
    source.map(float, uid="m").key_by(int).reduce(max, uid="r").sink_to(CollectSink(), uid="o")

    assert not any(timestamped(env).values())


def test_an_edge_added_late_marks_everything_downstream_of_it() -> None:
    graph = JobGraph(128)
    ts, middle, last = (graph.add(_node(i, kind)) for i, kind in enumerate(_KINDS))
    graph.connect(Edge(middle, last, Partitioning.FORWARD))

    graph.connect(Edge(ts, middle, Partitioning.FORWARD))

    assert (middle.timestamped, last.timestamped) == (True, True)


_KINDS = (OperatorKind.TIMESTAMPS, OperatorKind.MAP, OperatorKind.SINK)


def _node(node_id: int, kind: OperatorKind) -> OperatorNode:
    function = STRATEGY if kind is OperatorKind.TIMESTAMPS else float
    return OperatorNode(node_id, f"n{node_id}", f"n{node_id}", kind, function, 1, True)


async def _same(value: Any) -> Any:
    return value
