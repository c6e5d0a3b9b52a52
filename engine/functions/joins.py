"""The functions of window joins: per pair (``JoinFunction``, ``FlatJoinFunction``), per group.

``a.join(b)...window(...).apply(fn)`` calls ``fn`` once per pair of a left and a right record
with equal keys in one window; ``a.co_group(b)...apply(fn)`` calls it once per key and window
with both sides' records (either side possibly empty). A plain function serves as well as
these classes: a function of two records is a ``JoinFunction``; for ``co_group``, a function
of two lists is a ``CoGroupFunction``. ``pairs_of`` turns a join function into the
co-group function the window runs, as Flink's ``JoinCoGroupFunction`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["CoGroupFunction", "FlatJoinFunction", "JoinFunction", "co_group_of", "pairs_of"]

IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")
OUT = TypeVar("OUT")

CoGroup = Callable[[list[Any], list[Any]], Iterable[Any] | None]
"""What the join window calls per key and window: both sides' records, in arrival order."""


class JoinFunction(Generic[IN1, IN2, OUT]):
    """Joins one pair: a left and a right record with equal keys in one window (Flink's).

    ``join`` returns the one record the pair becomes. It is called for every pair of the
    window, left records in arrival order, and for each of them the right records in
    arrival order.
    """

    def join(self, first: IN1, second: IN2) -> OUT:
        """Return the record the pair ``first`` (left) and ``second`` (right) becomes."""
        raise NotImplementedError(f"{type(self).__name__} must implement join")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class FlatJoinFunction(Generic[IN1, IN2, OUT]):
    """Joins one pair into any number of records (Flink's ``FlatJoinFunction``).

    ``join`` returns (or yields) the records the pair becomes, none or many; it is called
    in the order of ``JoinFunction``'s.
    """

    def join(self, first: IN1, second: IN2) -> Iterable[OUT] | None:
        """Return or yield the records the pair ``first`` (left) and ``second`` becomes."""
        raise NotImplementedError(f"{type(self).__name__} must implement join")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class CoGroupFunction(Generic[IN1, IN2, OUT]):
    """Gets a key's left and right records of one window together (Flink's ``CoGroupFunction``).

    ``co_group`` is called once per key and window that holds a record of either side,
    when the window fires, with the left records and the right records in arrival order;
    one list may be empty (an outer join is written this way). It returns (or yields) the
    records to emit.
    """

    def co_group(self, first: list[IN1], second: list[IN2]) -> Iterable[OUT] | None:
        """Return or yield the records a key's window of ``first`` and ``second`` becomes."""
        raise NotImplementedError(f"{type(self).__name__} must implement co_group")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def pairs_of(function: Any) -> CoGroup:
    """The co-group function that calls a join function on every pair of a key's window.

    A ``FlatJoinFunction`` emits what each call returns; a ``JoinFunction`` or a plain
    function of two records emits one record per pair.
    """
    if isinstance(function, FlatJoinFunction):
        return _FlatPairs(function.join)
    join = function.join if isinstance(function, JoinFunction) else function
    return _Pairs(join)


def co_group_of(function: Any) -> CoGroup:
    """The co-group function of a ``CoGroupFunction`` or of a plain function of two lists."""
    if isinstance(function, CoGroupFunction):
        return function.co_group
    return function  # type: ignore[no-any-return]


class _Pairs:
    """One record per pair, left-major: ``join(left, right)``."""

    __slots__ = ("join",)

    def __init__(self, join: Callable[[Any, Any], Any]) -> None:
        self.join = join

    def __call__(self, first: list[Any], second: list[Any]) -> list[Any]:
        join = self.join
        return [join(left, right) for left in first for right in second]


class _FlatPairs:
    """Every record of ``join(left, right)`` for each pair, left-major."""

    __slots__ = ("join",)

    def __init__(self, join: Callable[[Any, Any], Iterable[Any] | None]) -> None:
        self.join = join

    def __call__(self, first: list[Any], second: list[Any]) -> Iterator[Any]:
        join = self.join
        for left in first:
            for right in second:
                emitted = join(left, right)
                if emitted is not None:
                    yield from emitted
