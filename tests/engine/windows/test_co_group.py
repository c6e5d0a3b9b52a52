"""A join window's records split back into their two sides; join functions over every pair."""

from __future__ import annotations

from collections.abc import Iterator

from lockgate.engine import CoGroupFunction, FlatJoinFunction, JoinFunction, TimeWindow
from lockgate.engine.functions.joins import co_group_of, pairs_of
from lockgate.engine.functions.two_inputs import SecondInput
from lockgate.engine.windows.co_group import CoGroupWindowFunction
from lockgate.engine.windows.functions import WindowContext

CONTEXT = WindowContext(TimeWindow(0.0, 10.0), watermark=9.0, processing_time=0.0)


def both(lefts: list[str], rights: list[str]) -> list[tuple[list[str], list[str]]]:
    return [(lefts, rights)]


def test_a_window_splits_into_each_inputs_records_in_arrival_order() -> None:
    window = CoGroupWindowFunction(both)

    out = window.process("k", CONTEXT, ["a", SecondInput("x"), "b", SecondInput("y")])

    assert list(out) == [(["a", "b"], ["x", "y"])]


def test_a_window_of_one_side_gives_the_other_an_empty_list() -> None:
    window = CoGroupWindowFunction(both)

    assert list(window.process("k", CONTEXT, [SecondInput("x")])) == [([], ["x"])]


def test_a_co_group_function_that_returns_nothing_emits_nothing() -> None:
    window = CoGroupWindowFunction(lambda lefts, rights: None)

    assert list(window.process("k", CONTEXT, ["a"])) == []


def test_a_join_function_gets_every_pair_left_major() -> None:
    class Glue(JoinFunction[str, str, str]):
        def join(self, first: str, second: str) -> str:
            return first + second

    for function in (Glue(), lambda first, second: first + second):
        assert list(pairs_of(function)(["a", "b"], ["x", "y"])) == ["ax", "ay", "bx", "by"]


def test_a_flat_join_function_emits_what_each_pair_returns_none_or_many() -> None:
    class Repeat(FlatJoinFunction[str, int, str]):
        def join(self, first: str, second: int) -> Iterator[str]:
            yield from [first] * second

    assert list(pairs_of(Repeat())(["a", "b"], [0, 2])) == ["a", "a", "b", "b"]


def test_a_co_group_function_or_a_plain_function_of_two_lists_serve_alike() -> None:
    class Sizes(CoGroupFunction[str, str, tuple[int, int]]):
        def co_group(self, first: list[str], second: list[str]) -> list[tuple[int, int]]:
            return [(len(first), len(second))]

    def sizes(first: list[str], second: list[str]) -> list[tuple[int, int]]:
        return [(len(first), len(second))]

    assert co_group_of(Sizes())(["a"], []) == co_group_of(sizes)(["a"], []) == [(1, 0)]
