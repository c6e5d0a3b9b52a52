"""Rolling reduce and aggregate: on RocksDB, a batch's keys that are not cached are read ahead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.operators.rolling import AggregateOperator, ReduceOperator
from lockgate.engine.state.rocksdb.access import StateAccess
from lockgate.engine.state.rocksdb.options import RocksDBOptions
from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore
from tests.engine.state.states import Average


def node(kind: OperatorKind, function: Any) -> OperatorNode:
    return OperatorNode(0, "sums", "sums", kind, function, 1, True, key_selector=lambda r: r[0])


def add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return (a[0], a[1] + b[1])


class Averages(Average):
    def add(self, value: Any, accumulator: list[int]) -> list[int]:
        return super().add(value[1], accumulator)


@pytest.mark.parametrize(
    ("kind", "function", "last"),
    [(OperatorKind.REDUCE, add, (39, 4)), (OperatorKind.AGGREGATE, Averages(), 2.0)],
)
def test_a_batch_of_keys_the_cache_does_not_hold_is_read_in_one_multi_get(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: OperatorKind, function: Any, last: Any
) -> None:
    operators = []
    for name in ("before", "after"):
        store = RocksDBKeyedStateStore(tmp_path / name, options=RocksDBOptions(cache_entries=100))
        restored = operators[-1].capture(1).materialize(128) if operators else None
        operator_class = ReduceOperator if kind is OperatorKind.REDUCE else AggregateOperator
        operators.append(operator_class(node(kind, function), restored, keyed_state=store))
        operators[-1].load_keyed_state()
        if not operators[:-1]:
            operators[-1].process_batch([(key, 1) for key in range(1_000)])
    multi_gets: list[int] = []
    get_many = StateAccess.get_many

    def counted(access: StateAccess, db_keys: list[bytes]) -> list[bytes | None]:
        multi_gets.append(len(db_keys))
        return get_many(access, db_keys)

    monkeypatch.setattr(StateAccess, "get_many", counted)
    monkeypatch.setattr(StateAccess, "get", None)  # a single get would fail

    out = operators[-1].process_batch([(key, 3) for key in range(40)])  # restored, not cached
    for operator in operators:
        operator.close()

    assert (multi_gets, out[-1]) == ([40], last)
