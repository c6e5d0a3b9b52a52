"""Rolling reduce: the running values, however a batch's keys hit the live layer."""

from __future__ import annotations

from typing import Any

from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.operators.rolling import ReduceOperator


def add(total: tuple[int, int], record: tuple[int, int]) -> tuple[int, int]:
    return total[0], total[1] + record[1]


def reduce_operator() -> ReduceOperator:
    node = OperatorNode(0, "sums", "sums", OperatorKind.REDUCE, add, 1, True)
    node.key_selector = lambda record: record[0]
    return ReduceOperator(node)


def running_sums(batches: list[list[tuple[int, int]]]) -> list[tuple[int, int]]:
    totals: dict[int, int] = {}
    out = []
    for record in (record for batch in batches for record in batch):
        totals[record[0]] = totals.get(record[0], 0) + record[1]
        out.append((record[0], totals[record[0]]))
    return out


def test_a_reduce_emits_the_running_values_whether_its_batches_hit_or_miss_the_live_layer():
    # New keys, then hits, then keys under a snapshot's frozen layer, half new, then frozen.
    batches = [
        [(key, 1) for key in range(100)],
        [(key % 3, 2) for key in range(100)],
        [(key, 3) for key in range(100)],
        [(key, 4) for key in range(50, 150)],
        [(key, 5) for key in range(100)],
    ]
    operator = reduce_operator()
    out: list[Any] = []

    for index, batch in enumerate(batches):
        out += operator.process_batch(batch)
        if index in (1, 3):
            operator.capture(index)

    assert out == running_sums(batches)
