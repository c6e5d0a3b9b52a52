"""A QueryState control message is answered by the subtask that takes it, and never fails it:
what the read raises goes back to the caller."""

from __future__ import annotations

from typing import Any

import pytest

from lockgate.engine.errors import QueryStateError
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.subtask.state_query import QueryAnswer, QueryState, answer_query
from lockgate.engine.state import (
    AggregateFunction,
    AggregatingStateDescriptor,
    KeyedStateStore,
    ValueStateDescriptor,
)


class Unreadable(AggregateFunction[int, int, int]):
    """Adds up; its result cannot be read."""

    def create_accumulator(self) -> int:
        return 0

    def add(self, value: int, accumulator: int) -> int:
        return accumulator + value

    def get_result(self, accumulator: int) -> int:
        raise ZeroDivisionError("no result")


def operator_with_state() -> Operator:
    node = OperatorNode(0, "counts", "counts", OperatorKind.PROCESS, None, 1, True)
    store = KeyedStateStore(owner="operator 'counts'")
    store.current_key = "a"
    store.get_state(ValueStateDescriptor[int]("count")).update(3)
    store.get_state(AggregatingStateDescriptor("broken", Unreadable())).add(1)
    return Operator(node, keyed_state=store)


def query(state_name: str, key: Any = "a") -> QueryState:
    return QueryState("counts", state_name, key, QueryAnswer(lambda answer: None), "1/1")


async def test_a_query_is_answered_with_the_keys_value() -> None:
    asked = query("count")

    answer_query(asked, [operator_with_state()])

    assert await asked.answer.wait() == 3


async def test_a_query_for_an_unknown_state_is_answered_with_the_error() -> None:
    asked = query("total")

    answer_query(asked, [operator_with_state()])

    with pytest.raises(QueryStateError, match="has no keyed state 'total'"):
        await asked.answer.wait()


async def test_a_function_raising_in_the_read_is_the_callers_error_not_the_subtasks() -> None:
    asked = query("broken")

    answer_query(asked, [operator_with_state()])  # does not raise

    with pytest.raises(QueryStateError, match="raised ZeroDivisionError") as refused:
        await asked.answer.wait()
    assert isinstance(refused.value.__cause__, ZeroDivisionError)


async def test_the_first_answer_wins_and_reports_done_once() -> None:
    done: list[QueryAnswer] = []
    answer = QueryAnswer(done.append)

    answer.set(1)
    answer.fail(QueryStateError("too late"))
    answer.set(2)

    assert await answer.wait() == 1
    assert done == [answer]
