"""Window assigners and window specs, pure: which windows a time falls in; what is refused."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockgate.engine import (
    AggregateFunction,
    CountTrigger,
    EventTimeSessionWindows,
    GlobalWindows,
    GraphError,
    OutputTag,
    ProcessingTimeTrigger,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from lockgate.engine.windows.spec import WindowFunctionKind, WindowSpec

times = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(times, st.sampled_from([1.0, 2.5, 60.0]), st.sampled_from([0.0, 0.5]))
def test_a_tumbling_window_holds_its_time(time: float, size: float, offset: float) -> None:
    [window] = TumblingEventTimeWindows.of(size, offset).assign_windows(time)

    assert isinstance(window, TimeWindow)
    assert window.start <= time < window.end
    assert window.end - window.start == pytest.approx(size)
    assert (window.start - offset) / size == pytest.approx(round((window.start - offset) / size))


def test_a_time_on_a_boundary_opens_the_next_window() -> None:
    assert TumblingEventTimeWindows.of(10).assign_windows(20.0) == [TimeWindow(20.0, 30.0)]
    assert TumblingEventTimeWindows.of(10).assign_windows(19.999) == [TimeWindow(10.0, 20.0)]


@given(times)
def test_a_time_is_in_size_over_slide_sliding_windows(time: float) -> None:
    windows = SlidingEventTimeWindows.of(10.0, 2.5).assign_windows(time)

    assert len(windows) == 4
    assert all(isinstance(w, TimeWindow) and w.start <= time < w.end for w in windows)
    assert len({w.start for w in windows if isinstance(w, TimeWindow)}) == 4


def test_a_window_is_complete_at_the_largest_time_below_its_end() -> None:
    window = TimeWindow(0.0, 10.0)

    assert window.max_timestamp < 10.0
    assert math.nextafter(window.max_timestamp, math.inf) == 10.0


def test_session_windows_merge_when_they_overlap_or_touch() -> None:
    first, second, apart = TimeWindow(0.0, 5.0), TimeWindow(5.0, 9.0), TimeWindow(9.5, 12.0)

    assert first.intersects(second)
    assert not second.intersects(apart)
    assert first.cover(second) == TimeWindow(0.0, 9.0)
    assert EventTimeSessionWindows.with_gap(3).assign_windows(4.0) == [TimeWindow(4.0, 7.0)]


class Sum(AggregateFunction[int, int, int]):
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: int, accumulator: int) -> int:
        return accumulator + value

    def get_result(self, accumulator: int) -> int:
        return accumulator


def spec(**options: Any) -> WindowSpec:
    settings: dict[str, Any] = {
        "assigner": TumblingEventTimeWindows.of(10),
        "kind": WindowFunctionKind.REDUCE,
        "function": max,
    }
    return WindowSpec(**(settings | options))


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"assigner": TumblingEventTimeWindows.of(0)}, "size must be a number of seconds > 0"),
        ({"assigner": "hourly"}, "needs a window assigner"),
        ({"assigner": GlobalWindows.create()}, "never ends by time.*count_window"),
        ({"trigger": CountTrigger.of(0)}, "CountTrigger needs a count >= 1"),
        ({"trigger": ProcessingTimeTrigger.create()}, "does not fit TumblingEventTimeWindows"),
        ({"allowed_lateness": -1}, "allowed_lateness must be 0 or more"),
        (
            {"assigner": TumblingProcessingTimeWindows.of(5), "allowed_lateness": 2},
            "event-time windows only",
        ),
        ({"late_tag": "late"}, "needs an OutputTag"),
        ({"kind": WindowFunctionKind.AGGREGATE}, "needs an AggregateFunction"),
        ({"kind": WindowFunctionKind.PROCESS}, "needs a ProcessWindowFunction"),
        (
            {
                "assigner": EventTimeSessionWindows.with_gap(5),
                "kind": WindowFunctionKind.AGGREGATE,
                "function": Sum(),
            },
            "Sum must implement merge",
        ),
    ],
)
def test_a_spec_refuses_what_cannot_work_and_names_the_window(
    options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(GraphError, match=f"window 'totals': .*{problem}"):
        spec(**options).check("totals")


def test_a_spec_that_works_passes() -> None:
    class Collect(ProcessWindowFunction[int, int, str]):
        pass

    spec(kind=WindowFunctionKind.PROCESS, function=Collect()).check("totals")
    spec(late_tag=OutputTag[int]("late"), allowed_lateness=5).check("totals")
    spec(assigner=GlobalWindows.create(), trigger=CountTrigger.of(3)).check("totals")
