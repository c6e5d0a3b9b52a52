"""FlatMapOperator.chunks: a flat_map's results, in order, in bounded lists."""

from __future__ import annotations

from typing import Any

from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.operators.basic import FlatMapOperator


def flat_map(fn: Any) -> FlatMapOperator:
    node = OperatorNode(
        node_id=0,
        uid="split",
        name="split",
        kind=OperatorKind.FLAT_MAP,
        function=fn,
        parallelism=1,
        uid_is_explicit=True,
    )
    return FlatMapOperator(node)


def test_chunks_hold_every_result_in_order() -> None:
    operator = flat_map(lambda n: (n * 10 + i for i in range(n)))

    chunks = list(operator.chunks([1, 2, 3, 4], limit=3))

    assert [item for chunk in chunks for item in chunk] == operator.process_batch([1, 2, 3, 4])


def test_a_generator_is_cut_into_chunks_of_the_limit() -> None:
    operator = flat_map(lambda n: iter(range(n)))

    sizes = [len(chunk) for chunk in operator.chunks([10], limit=4)]

    assert sizes == [4, 4, 2]


def test_lists_are_taken_whole_and_the_chunk_is_cut_after_them() -> None:
    operator = flat_map(lambda n: [n] * n)

    sizes = [len(chunk) for chunk in operator.chunks([5, 1], limit=3)]

    assert sizes == [5, 1]


def test_a_generator_is_read_only_as_far_as_the_chunks_taken() -> None:
    read: list[int] = []

    def numbers(n: int) -> Any:
        for i in range(n):
            read.append(i)
            yield i

    chunks = flat_map(numbers).chunks([1_000], limit=10)
    next(chunks)

    assert len(read) <= 11
