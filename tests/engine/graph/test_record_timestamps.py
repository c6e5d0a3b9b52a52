"""Which operators have event time, and which carry timestamps: only where they are read."""

from __future__ import annotations

from typing import Any

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    KeyedProcessFunction,
    OutputTag,
    StreamEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from lockgate.engine.graph.job_graph import Edge, JobGraph, OperatorKind, OperatorNode, Partitioning

STRATEGY = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(float)
SIDE = OutputTag[Any]("side")


def flags(env: StreamEnvironment) -> dict[str, tuple[bool, bool, bool]]:
    """Per uid, after planning: (event_time, timestamped, emits_timestamps)."""
    nodes = env.plan().graph.nodes
    return {n.uid: (n.event_time, n.timestamped, n.emits_timestamps) for n in nodes}


def test_operators_downstream_of_a_strategy_have_event_time_and_a_reader_gets_pairs() -> None:
    env = StreamEnvironment()
    source = env.from_source(CollectionSource([1]), uid="plain")
    stamped = source.map(float, uid="before").assign_timestamps_and_watermarks(STRATEGY, uid="ts")
    stamped.map(float, uid="after").key_by(int).process(
        KeyedProcessFunction(), uid="reads"
    ).sink_to(CollectSink(), uid="out")

    assert flags(env) == {
        "plain": (False, False, False),
        "before": (False, False, False),
        "ts": (False, False, True),  # its input has no timestamps; what it emits does
        "after": (True, True, True),
        "reads": (True, True, True),
        "out": (True, True, True),
    }


def test_a_strategy_whose_timestamps_nobody_reads_leaves_records_plain() -> None:
    env = StreamEnvironment()
    source = env.from_source(CollectionSource([1]), uid="e", watermark_strategy=STRATEGY)
    source.map(float, uid="m").key_by(int).reduce(max, uid="r").sink_to(CollectSink(), uid="o")

    assert flags(env) == {
        "e": (False, False, False),
        "e-watermarks": (False, False, False),
        "m": (True, False, False),
        "r": (True, False, False),
        "o": (True, False, False),
    }


def test_a_branch_beside_a_reader_gets_pairs_too() -> None:
    env = StreamEnvironment()
    source = env.from_source(CollectionSource([1]), uid="e", watermark_strategy=STRATEGY)
    mapped = source.map(float, uid="m")
    mapped.key_by(int).window(TumblingEventTimeWindows.of(1)).reduce(max, uid="w").sink_to(
        CollectSink(), uid="windows"
    )
    mapped.sink_to(CollectSink(), uid="raw")

    assert flags(env)["raw"] == (True, True, True)


def test_a_union_with_one_input_with_event_time_has_event_time() -> None:
    env = StreamEnvironment()
    stamped = env.from_source(CollectionSource([1]), uid="a", watermark_strategy=STRATEGY)
    plain = env.from_source(CollectionSource([2]), uid="b")
    both = plain.union(stamped).map(float, uid="both")
    both.key_by(int).process(KeyedProcessFunction(), uid="reads").sink_to(CollectSink(), uid="o")

    assert flags(env)["both"] == (True, True, True)
    assert flags(env)["b"] == (False, False, False)  # its edge stamps its records None


def test_a_side_output_of_an_operator_with_event_time_has_event_time() -> None:
    env = StreamEnvironment()
    stamped = env.from_source(CollectionSource([1]), uid="a", watermark_strategy=STRATEGY)
    calls = stamped.async_map(_same, on_failure=SIDE, uid="calls")
    calls.sink_to(CollectSink(), uid="out")
    calls.side_output(SIDE).map(float, uid="failed").sink_to(CollectSink(), uid="side")

    assert flags(env)["failed"][0] is True


def test_a_job_without_a_watermark_strategy_has_no_event_time_anywhere() -> None:
    env = StreamEnvironment()
    source = env.from_source(CollectionSource([1]), uid="plain")
    source.map(float, uid="m").key_by(int).process(KeyedProcessFunction(), uid="p").sink_to(
        CollectSink(), uid="o"
    )

    assert not any(flag for node in flags(env).values() for flag in node)


def test_an_edge_added_late_gives_event_time_to_everything_downstream_of_it() -> None:
    graph = JobGraph(128)
    ts, middle, last = (graph.add(_node(i, kind)) for i, kind in enumerate(_KINDS))
    graph.connect(Edge(middle, last, Partitioning.FORWARD))

    graph.connect(Edge(ts, middle, Partitioning.FORWARD))

    assert (middle.event_time, last.event_time) == (True, True)


_KINDS = (OperatorKind.TIMESTAMPS, OperatorKind.MAP, OperatorKind.SINK)


def _node(node_id: int, kind: OperatorKind) -> OperatorNode:
    function = STRATEGY if kind is OperatorKind.TIMESTAMPS else float
    return OperatorNode(node_id, f"n{node_id}", f"n{node_id}", kind, function, 1, True)


async def _same(value: Any) -> Any:
    return value
