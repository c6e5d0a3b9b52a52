"""Operators and their keyed state backend: kinds in captures and restores, and closing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockgate.engine import IncompatibleState, KeyedProcessFunction, ValueStateDescriptor
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.operators.kinds import create_operator
from lockgate.engine.runtime.operators.rolling import ReduceOperator
from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore


def node(kind: OperatorKind, function: Any, uid: str = "sums") -> OperatorNode:
    return OperatorNode(0, uid, uid, kind, function, 1, True, key_selector=lambda r: r[0])


def add(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
    return (a[0], a[1] + b[1])


def test_a_capture_carries_the_kind_of_every_keyed_state() -> None:
    operator = ReduceOperator(node(OperatorKind.REDUCE, add))
    operator.process_batch([("a", 1)])

    snapshot = operator.capture(1).materialize(128)

    assert snapshot.kinds == {"reduced": "value"}


def test_a_restore_of_another_kind_of_state_names_the_operator_and_the_state() -> None:
    restored = OperatorSnapshot("sums", kinds={"reduced": "list"})

    operator = ReduceOperator(node(OperatorKind.REDUCE, add), restored)

    with pytest.raises(IncompatibleState, match=r"operator 'sums': state 'reduced' was restored"):
        operator.load_keyed_state()


class FailsToClose(KeyedProcessFunction[Any, Any, Any]):
    def close(self) -> None:
        raise RuntimeError("cannot close")


def test_an_operator_closes_its_keyed_state_even_if_its_function_fails_to(
    tmp_path: Path,
) -> None:
    store = RocksDBKeyedStateStore(tmp_path / "db")
    store.table(ValueStateDescriptor("count"))
    operator = create_operator(node(OperatorKind.PROCESS, FailsToClose()), keyed_state=store)

    with pytest.raises(RuntimeError, match="cannot close"):
        operator.close()

    assert not (tmp_path / "db").exists()
