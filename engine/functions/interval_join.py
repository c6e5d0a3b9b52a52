"""IntervalJoinSpec: an interval join's bounds, its function and its inputs' event time, checked.

A left record at ``l`` joins a right record at ``r`` with the same key when
``l + lower <= r <= l + upper`` (Flink's ``between(lower, upper)``); each bound may be
excluded (``<`` instead of ``<=``). Times are floats, so an excluded bound is a strict
comparison where Flink, counting whole milliseconds, moves the bound by one. The sums are
compared exactly, never rounded first (as Flink's whole milliseconds are), and the same
test decides a pair whichever record comes second, so no pair depends on arrival order.

A buffered record can join nothing more once the watermark reaches its cleanup time: the
largest float at or below ``l + upper`` for a left record (``l`` when ``upper`` is not
positive), at or below ``r - lower`` for a right one (``r`` when ``lower`` is not negative),
Flink's cleanup times. Every record on time after that (above the watermark) is beyond the
bound, so removing the record then loses no pair. Pure: no event loop.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lockgate.engine.errors import GraphError
from lockgate.engine.functions.process_join import ProcessJoinFunction
from lockgate.engine.functions.side_outputs import OutputTag

__all__ = ["IntervalJoinSpec"]


@dataclass(frozen=True, slots=True, kw_only=True)
class IntervalJoinSpec:
    """Everything an interval join operator needs; ``check`` raises the first problem.

    Each side's records carry their event time (the timestamps of the watermark strategy
    upstream of that side); ``left_late`` and ``right_late`` are the side
    outputs of each side's late records, or ``None`` to drop them.
    """

    lower: float
    upper: float
    function: ProcessJoinFunction[Any, Any, Any]
    lower_inclusive: bool = True
    upper_inclusive: bool = True
    left_late: OutputTag[Any] | None = None
    right_late: OutputTag[Any] | None = None

    def joins(self, left: float, right: float) -> bool:
        """Whether a left record at ``left`` and a right record at ``right`` join."""
        above = _sum_against(left, self.lower, right)  # sign of left + lower - right
        if above > 0 or (above == 0 and not self.lower_inclusive):
            return False
        below = _sum_against(left, self.upper, right)
        return below > 0 or (below == 0 and self.upper_inclusive)

    def left_cleanup(self, time: float) -> float:
        """When a left record at ``time`` can join nothing more: the watermark that frees it."""
        return _sum_rounded_down(time, self.upper) if self.upper > 0 else time

    def right_cleanup(self, time: float) -> float:
        """When a right record at ``time`` can join nothing more: the watermark that frees it."""
        return _sum_rounded_down(time, -self.lower) if self.lower < 0 else time

    def check(self, uid: str) -> None:
        """Raise ``GraphError`` naming ``uid`` for the first problem."""
        for problem in self._problems():
            raise GraphError(f"interval join '{uid}': {problem}")

    def _problems(self) -> Iterator[str]:
        yield from self._bound_problems()
        function: Any = self.function  # whatever the user passed
        if not isinstance(function, ProcessJoinFunction):
            yield (
                "process() needs a ProcessJoinFunction (process_element(left, right, ctx)); "
                f"got {function!r}"
            )
        tags: tuple[tuple[str, Any], ...] = (("left", self.left_late), ("right", self.right_late))
        for side, tag in tags:
            if tag is not None and not isinstance(tag, OutputTag):
                yield f"side_output_{side}_late_data() needs an OutputTag; got {tag!r}"

    def _bound_problems(self) -> Iterator[str]:
        bounds = (self.lower, self.upper)
        if not all(_is_time(bound) for bound in bounds):
            yield f"between(lower, upper) needs two finite numbers; got {bounds!r}"
            return
        if self.lower > self.upper:
            yield (
                f"between({self.lower!r}, {self.upper!r}): the lower bound is above the upper "
                "bound; give lower <= upper (a negative lower bound reaches back in time)"
            )
        elif self.lower == self.upper and not (self.lower_inclusive and self.upper_inclusive):
            yield (
                f"between({self.lower!r}, {self.upper!r}) with an excluded bound joins nothing; "
                "include both bounds or widen the interval"
            )


def _sum_against(a: float, b: float, c: float) -> int:
    """The sign of the exact ``a + b - c``: -1, 0 or 1."""
    total = a + b
    if total != c:  # rounding to nearest keeps the exact sum on the same side of c
        return 1 if total > c else -1
    error = _rounding_error(a, b, total)
    return (error > 0) - (error < 0)


def _sum_rounded_down(a: float, b: float) -> float:
    """The largest float at or below the exact sum ``a + b``."""
    total = a + b
    return math.nextafter(total, -math.inf) if _rounding_error(a, b, total) < 0 else total


def _rounding_error(a: float, b: float, total: float) -> float:
    """What rounding ``a + b`` to ``total`` lost, exactly (Knuth's TwoSum)."""
    if math.isinf(total):
        return 0.0
    b_part = total - a
    return (a - (total - b_part)) + (b - b_part)


def _is_time(bound: object) -> bool:
    return isinstance(bound, int | float) and not isinstance(bound, bool) and math.isfinite(bound)
