"""Batch steps: a map chained right before a running reduce runs in the reduce's loop."""

from __future__ import annotations

from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import OperatorError, StreamEnvironment
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.operators.basic import FilterOperator, MapOperator
from lockgate.engine.runtime.operators.rolling import ReduceOperator
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.runtime.subtask.batch_steps import batch_steps


def stage(kind: OperatorKind, uid: str, function: Any) -> tuple[Operator, OperatorScope]:
    node = OperatorNode(0, uid, uid, kind, function, 1, True)
    node.key_selector = lambda record: record[0]
    operator_type = {
        OperatorKind.MAP: MapOperator,
        OperatorKind.FILTER: FilterOperator,
        OperatorKind.REDUCE: ReduceOperator,
    }[kind]
    return operator_type(node), OperatorScope(uid, 0, 1)


def doubled(record: tuple[int, int]) -> tuple[int, int]:
    return record[0], record[1] * 2


def add(total: tuple[int, int], record: tuple[int, int]) -> tuple[int, int]:
    return total[0], total[1] + record[1]


def test_a_map_right_before_a_reduce_is_one_step_under_the_reduces_scope() -> None:
    stages = [stage(OperatorKind.MAP, "doubled", doubled), stage(OperatorKind.REDUCE, "sums", add)]

    steps = batch_steps(stages)

    assert [(step.scope.uid, step.after) for step in steps] == [("sums", 2), ("sums", 2)]
    assert steps[0].process([(1, 1), (1, 2), (2, 5)]) == [(1, 2), (1, 6), (2, 10)]


def test_other_operators_are_steps_of_their_own() -> None:
    stages = [
        stage(OperatorKind.MAP, "doubled", doubled),
        stage(OperatorKind.FILTER, "small", lambda record: record[1] < 10),
        stage(OperatorKind.REDUCE, "sums", add),
    ]

    steps = batch_steps(stages)

    assert [(step.scope.uid, step.after) for step in steps] == [
        ("doubled", 1),
        ("small", 2),
        ("sums", 3),
    ]


def fails_at_three(record: tuple[int, int]) -> tuple[int, int]:
    if record[1] == 3:
        raise ValueError("three")
    return record


async def test_the_error_of_a_map_run_in_a_reduces_loop_names_the_map() -> None:
    env = StreamEnvironment(parallelism=1)
    (
        env.from_source(CollectionSource([(0, n) for n in range(10)]), uid="numbers")
        .map(fails_at_three, uid="checked")
        .key_by(lambda record: record[0])
        .reduce(add, uid="sums")
        .sink_to(CollectSink(), uid="out")
    )

    with pytest.raises(OperatorError, match=r"operator 'checked' \(subtask 1/1\)") as failure:
        await env.execute("fails")

    assert isinstance(failure.value.__cause__, ValueError)
