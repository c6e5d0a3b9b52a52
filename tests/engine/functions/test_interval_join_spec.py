"""IntervalJoinSpec: which pairs join (bounds included or not), when a buffered record goes."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockgate.engine import GraphError, OutputTag, ProcessJoinFunction
from lockgate.engine.functions.interval_join import IntervalJoinSpec


class Nothing(ProcessJoinFunction[Any, Any, Any]):
    def process_element(self, left: Any, right: Any, ctx: Any) -> None:
        return None


def spec(lower: float, upper: float, **options: Any) -> IntervalJoinSpec:
    return IntervalJoinSpec(
        lower=lower,
        upper=upper,
        function=options.pop("function", Nothing()),
        **options,
    )


def test_both_bounds_are_included_by_default() -> None:
    between = spec(-2.0, 3.0)

    joined = [right for right in (7.0, 8.0, 10.0, 13.0, 14.0) if between.joins(10.0, right)]

    assert joined == [8.0, 10.0, 13.0]


def test_an_excluded_bound_leaves_out_the_record_exactly_on_it() -> None:
    lower = spec(-2.0, 3.0, lower_inclusive=False)
    upper = spec(-2.0, 3.0, upper_inclusive=False)

    assert [lower.joins(10.0, r) for r in (8.0, 8.5, 13.0)] == [False, True, True]
    assert [upper.joins(10.0, r) for r in (8.0, 12.5, 13.0)] == [True, True, False]


times = st.floats(-1e9, 1e9, allow_nan=False)


@given(
    left=times,
    right=times,
    lower=st.floats(-1e3, 1e3),
    width=st.floats(0, 1e3),
    lower_inclusive=st.booleans(),
    upper_inclusive=st.booleans(),
)
def test_a_pair_joins_exactly_when_its_times_lie_within_the_bounds(
    left: float,
    right: float,
    lower: float,
    width: float,
    lower_inclusive: bool,
    upper_inclusive: bool,
) -> None:
    # Exact sums, as Flink's whole milliseconds: left + lower is never rounded first.
    upper = lower + width
    between = spec(lower, upper, lower_inclusive=lower_inclusive, upper_inclusive=upper_inclusive)
    low, high, at = (
        Fraction(left) + Fraction(lower),
        Fraction(left) + Fraction(upper),
        Fraction(right),
    )

    above = low <= at if lower_inclusive else low < at
    below = at <= high if upper_inclusive else at < high
    assert between.joins(left, right) == (above and below)


def test_a_sum_that_rounds_onto_a_time_does_not_join_it() -> None:
    # 2**-60 - 1 rounds to -1.0: compared exactly, a right record at -1.0 is below the bound.
    between = spec(-1.0, 0.0)

    assert not between.joins(2.0**-60, -1.0)
    assert between.joins(0.0, -1.0)


def test_a_left_record_is_freed_at_its_time_plus_a_positive_upper_bound() -> None:
    assert spec(-2.0, 3.0).left_cleanup(10.0) == 13.0
    assert spec(-5.0, -1.0).left_cleanup(10.0) == 10.0  # only earlier right records join it


def test_a_right_record_is_freed_at_its_time_minus_a_negative_lower_bound() -> None:
    assert spec(-2.0, 3.0).right_cleanup(10.0) == 12.0
    assert spec(1.0, 5.0).right_cleanup(10.0) == 10.0  # only earlier left records join it


@given(time=times, lower=st.floats(-1e3, 1e3), width=st.floats(0, 1e3), after=st.floats(0, 1e3))
def test_no_record_on_time_once_a_record_is_freed_joins_it(
    time: float, lower: float, width: float, after: float
) -> None:
    # A watermark w at the cleanup time frees the record; on time after it is only above w.
    between = spec(lower, lower + width)
    left_freed_at, right_freed_at = between.left_cleanup(time), between.right_cleanup(time)

    right = math.nextafter(left_freed_at, math.inf) + after
    left = math.nextafter(right_freed_at, math.inf) + after

    assert not between.joins(time, right)
    assert not between.joins(left, time)


@pytest.mark.parametrize(
    ("lower", "upper", "options", "problem"),
    [
        (3.0, 2.0, {}, r"between\(3.0, 2.0\): the lower bound is above the upper bound"),
        (2.0, 2.0, {"upper_inclusive": False}, r"with an excluded bound joins nothing"),
        (float("nan"), 2.0, {}, r"between\(lower, upper\) needs two finite numbers"),
        (0.0, 1.0, {"function": lambda x, y: x}, r"process\(\) needs a ProcessJoinFunction"),
        (0.0, 1.0, {"left_late": "late"}, r"side_output_left_late_data\(\) needs an OutputTag"),
    ],
)
def test_a_spec_refuses_what_cannot_join_naming_the_uid(
    lower: float, upper: float, options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(GraphError, match=rf"^interval join 'orders': .*{problem}"):
        spec(lower, upper, **options).check("orders")


def test_a_spec_with_equal_included_bounds_and_late_outputs_is_valid() -> None:
    spec(2.0, 2.0, right_late=OutputTag[Any]("late")).check("orders")
