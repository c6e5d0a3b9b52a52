"""GraphBuilder: the job graph under construction, tested without an event loop."""

from __future__ import annotations

import pytest

from lockgate.engine.errors import GraphError
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.functions.two_inputs import SecondInput
from lockgate.engine.graph.builder import GraphBuilder, Producer
from lockgate.engine.graph.job_graph import ChainingStrategy, OperatorKind, Partitioning

LATE = OutputTag[int]("late")


def builder(parallelism: int = 2) -> GraphBuilder:
    return GraphBuilder(parallelism=parallelism, max_parallelism=128)


def test_an_operator_without_a_uid_is_named_after_its_kind_and_id() -> None:
    graph = builder()
    first = graph.add_operator(OperatorKind.SOURCE, object())
    second = graph.add_operator(OperatorKind.MAP, str)

    assert (first.uid, second.uid, second.name) == ("source-0", "map-1", "map-1")


def test_an_operator_gets_the_default_parallelism_current_when_it_is_added() -> None:
    graph = builder(parallelism=2)
    before = graph.add_operator(OperatorKind.MAP, str, uid="before")
    graph.parallelism = 3
    after = graph.add_operator(OperatorKind.MAP, str, uid="after")

    assert (before.parallelism, after.parallelism) == (2, 3)


def test_connect_all_forwards_between_equal_parallelisms_and_rebalances_otherwise() -> None:
    graph = builder()
    source = graph.add_operator(OperatorKind.SOURCE, object(), uid="in")
    same = graph.add_operator(OperatorKind.MAP, str, uid="same")
    wider = graph.add_operator(OperatorKind.MAP, str, uid="wider", parallelism=4)

    graph.connect_all([Producer(source)], same, None, None)
    graph.connect_all([Producer(source)], wider, None, None)

    kinds = [(edge.target.uid, edge.partitioning) for edge in graph.graph.edges]
    assert kinds == [("same", Partitioning.FORWARD), ("wider", Partitioning.REBALANCE)]


def test_connect_all_keeps_a_partitioning_it_is_given() -> None:
    graph = builder()
    source = graph.add_operator(OperatorKind.SOURCE, object(), uid="in")
    target = graph.add_operator(OperatorKind.REDUCE, max, uid="sums")

    graph.connect_all([Producer(source)], target, Partitioning.HASH, abs)

    (edge,) = graph.graph.edges
    assert (edge.partitioning, edge.key_selector) == (Partitioning.HASH, abs)


def test_the_second_input_marker_chains_to_the_second_stream_named_after_the_target() -> None:
    graph = builder()
    second = graph.add_operator(OperatorKind.SOURCE, object(), uid="rules", parallelism=1)
    target = graph.add_operator(OperatorKind.CO_PROCESS, object(), uid="join")

    marker = graph.add_second_input_marker(target, [Producer(second)])

    (edge,) = graph.graph.edges
    assert (marker.node.uid, marker.node.function, marker.node.parallelism) == (
        "join-second-input",
        SecondInput,
        1,
    )
    assert (edge.source.uid, edge.partitioning) == ("rules", Partitioning.FORWARD)


def test_a_side_output_of_a_union_is_refused_naming_both_operators() -> None:
    graph = builder()
    left = graph.add_operator(OperatorKind.SOURCE, object(), uid="left")
    right = graph.add_operator(OperatorKind.SOURCE, object(), uid="right")

    with pytest.raises(GraphError, match="a union of 'left', 'right'"):
        graph.side_producer([Producer(left), Producer(right)], LATE, partitioned=False)


def test_a_side_output_of_a_partitioned_stream_is_refused() -> None:
    graph = builder()
    source = graph.add_operator(OperatorKind.SOURCE, object(), uid="in")

    with pytest.raises(GraphError, match="before key_by"):
        graph.side_producer([Producer(source)], LATE, partitioned=True)


def test_a_side_output_needs_an_output_tag() -> None:
    graph = builder()
    source = graph.add_operator(OperatorKind.SOURCE, object(), uid="in")

    with pytest.raises(GraphError, match="needs an OutputTag"):
        graph.side_producer([Producer(source)], "late", partitioned=False)  # type: ignore[arg-type]


def test_chaining_is_set_on_the_one_operator_of_a_stream() -> None:
    graph = builder()
    source = graph.add_operator(OperatorKind.SOURCE, object(), uid="in")

    graph.set_chaining([Producer(source)], ChainingStrategy.NEVER, partitioned=False)

    assert source.chaining is ChainingStrategy.NEVER


def test_disable_chaining_on_a_union_is_refused_naming_both_operators() -> None:
    graph = builder()
    left = graph.add_operator(OperatorKind.SOURCE, object(), uid="left")
    right = graph.add_operator(OperatorKind.SOURCE, object(), uid="right")

    with pytest.raises(GraphError, match=r"disable_chaining\(\) needs .* 'left', 'right'"):
        graph.set_chaining(
            [Producer(left), Producer(right)], ChainingStrategy.NEVER, partitioned=False
        )


def test_start_new_chain_on_a_partitioned_stream_is_refused_naming_the_operator() -> None:
    graph = builder()
    source = graph.add_operator(OperatorKind.SOURCE, object(), uid="in")

    with pytest.raises(GraphError, match=r"start_new_chain\(\) of operator 'in' .* before key_by"):
        graph.set_chaining([Producer(source)], ChainingStrategy.HEAD, partitioned=True)
