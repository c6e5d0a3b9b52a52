"""The interval join operator on hand-computed inputs: bounds, order, lateness and cleanup.

Each test drives one interval join operator directly, record by record and watermark by
watermark, so every record's lateness is exact. Records are ``(key, time, value)``, and
reach the operator as the ``(time, record)`` pairs a watermark strategy upstream makes; a
right record arrives wrapped in ``SecondInput``, as the job graph's marker wraps it. Every
pair the operator emits must carry the later of its two times (checked on each batch).
"""

from __future__ import annotations

from typing import Any

import pytest

from lockgate.engine import (
    ManualClock,
    OutputTag,
    ProcessJoinContext,
    ProcessJoinFunction,
    RuntimeContext,
    Watermark,
)
from lockgate.engine.functions.interval_join import IntervalJoinSpec
from lockgate.engine.functions.side_outputs import SideOutputCollector
from lockgate.engine.functions.two_inputs import PerInput, SecondInput
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.operators.interval_join import (
    LEFT_BUFFER,
    RIGHT_BUFFER,
    StampedIntervalJoinOperator,
)
from lockgate.engine.state import MapStateDescriptor

Event = tuple[str, float, int]
LEFT_LATE = OutputTag[Event]("left-late")
RIGHT_LATE = OutputTag[Event]("right-late")


class Pairs(ProcessJoinFunction[Event, Event, tuple[Any, ...]]):
    """(left value, right value, left time, right time, the pair's time)."""

    def process_element(
        self, left: Event, right: Event, ctx: ProcessJoinContext
    ) -> list[tuple[Any, ...]]:
        return [(left[2], right[2], ctx.left_timestamp(), ctx.right_timestamp(), ctx.timestamp())]


class IntervalJoinOperator(StampedIntervalJoinOperator):
    """The operator, fed records stamped with their times; its pairs returned unstamped."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        out = super().process_batch([(_time(record), record) for record in records])
        assert all(stamp == pair[4] for stamp, pair in out), out
        return [pair for _, pair in out]


def _time(record: Any) -> float:
    return float(record.value[1] if isinstance(record, SecondInput) else record[1])


def operator(lower: float, upper: float, **options: Any) -> IntervalJoinOperator:
    spec = IntervalJoinSpec(lower=lower, upper=upper, function=Pairs(), **options)
    key = PerInput(lambda event: event[0], lambda event: event[0])
    node = OperatorNode(0, "j", "j", OperatorKind.INTERVAL_JOIN, spec, 1, True, key)
    node.timestamped = node.emits_timestamps = True
    join = IntervalJoinOperator(node, clock=ManualClock())
    join.open(RuntimeContext("j", 0, 1, 128, ManualClock(), join.keyed_state))
    return join


def left(time: float, value: int, key: str = "a") -> Event:
    return (key, time, value)


def right(time: float, value: int, key: str = "a") -> SecondInput:
    return SecondInput((key, time, value))


def buffered(join: IntervalJoinOperator, buffer: MapStateDescriptor[Any, Any]) -> list[Any]:
    """Key "a"'s buffered (time, records) of one side."""
    join.keyed_state.current_key = "a"
    return join.keyed_state.get_state(buffer).items()


def test_right_records_join_from_lower_to_upper_both_bounds_included() -> None:
    join = operator(-2.0, 3.0)
    join.process_batch([left(10.0, 1)])

    out = join.process_batch([right(t, int(t)) for t in (7.0, 8.0, 10.0, 13.0, 14.0)])

    assert [pair[1] for pair in out] == [8, 10, 13]


def test_excluded_bounds_leave_out_the_records_exactly_on_them() -> None:
    join = operator(-2.0, 3.0, lower_inclusive=False, upper_inclusive=False)
    join.process_batch([left(10.0, 1)])

    out = join.process_batch([right(t, int(t * 2)) for t in (8.0, 8.5, 12.5, 13.0)])

    assert [pair[1] for pair in out] == [17, 25]


def test_a_pair_joins_whichever_record_comes_first() -> None:
    early = operator(-2.0, 3.0)
    late = operator(-2.0, 3.0)

    first = early.process_batch([left(10.0, 1), right(12.0, 2)])
    second = late.process_batch([right(12.0, 2), left(10.0, 1)])

    assert first == second == [(1, 2, 10.0, 12.0, 12.0)]


def test_the_pair_gets_both_timestamps_and_the_later_one_as_its_own() -> None:
    join = operator(-5.0, 5.0)

    out = join.process_batch([right(7.0, 2), left(9.0, 1), right(11.0, 3)])

    assert out == [(1, 2, 9.0, 7.0, 9.0), (1, 3, 9.0, 11.0, 11.0)]


def test_only_records_of_the_same_key_join() -> None:
    join = operator(-1.0, 1.0)

    out = join.process_batch([left(5.0, 1, "a"), right(5.0, 2, "b"), right(5.0, 3, "a")])

    assert out == [(1, 3, 5.0, 5.0, 5.0)]


def test_records_out_of_order_above_the_watermark_still_join() -> None:
    join = operator(0.0, 2.0)
    join.process_batch([left(20.0, 1), right(21.0, 2)])
    join.process_watermark(Watermark(9.5))

    out = join.process_batch([left(10.0, 3), right(11.0, 4), right(12.0, 5)])

    assert out == [(3, 4, 10.0, 11.0, 11.0), (3, 5, 10.0, 12.0, 12.0)]


def test_a_record_at_or_below_the_watermark_is_late_and_dropped() -> None:
    join = operator(-10.0, 10.0)
    join.process_batch([left(20.0, 1)])
    join.process_watermark(Watermark(15.0))

    out = join.process_batch([right(15.0, 2), right(14.0, 3), right(15.5, 4)])

    assert out == [(1, 4, 20.0, 15.5, 20.0)]
    assert join.late_records_dropped == 2


def test_late_records_go_to_their_sides_late_outputs_when_given() -> None:
    join = operator(-10.0, 10.0, left_late=LEFT_LATE, right_late=RIGHT_LATE)
    aside = SideOutputCollector([LEFT_LATE, RIGHT_LATE])
    join.send_side_outputs_to(aside)
    join.process_watermark(Watermark(15.0))

    join.process_batch([left(12.0, 1), right(13.0, 2), left(16.0, 3)])

    assert aside.drain() == {  # each with the timestamp it came with
        LEFT_LATE: [(12.0, ("a", 12.0, 1))],
        RIGHT_LATE: [(13.0, ("a", 13.0, 2))],
    }
    assert join.late_records_dropped == 0


def test_the_watermark_frees_a_left_record_once_no_on_time_right_record_can_join_it() -> None:
    join = operator(-2.0, 3.0)
    join.process_batch([left(10.0, 1)])
    join.process_watermark(Watermark(12.5))

    before = join.process_batch([right(13.0, 2)])
    join.process_watermark(Watermark(13.0))  # 10 + 3: the left record goes

    assert before == [(1, 2, 10.0, 13.0, 13.0)]
    assert buffered(join, LEFT_BUFFER) == []


@pytest.mark.parametrize(("lower", "upper"), [(-2.0, 3.0), (1.0, 4.0), (-4.0, -1.0), (0.0, 0.0)])
def test_the_watermark_past_every_cleanup_time_leaves_no_state(lower: float, upper: float) -> None:
    join = operator(lower, upper)
    join.process_batch([left(10.0, 1), right(11.0, 2), left(10.0, 3, "b"), right(30.0, 4, "b")])
    held = join.keyed_state.statistics().entries

    join.process_watermark(Watermark(40.0))

    assert held > 0
    assert join.keyed_state.statistics().entries == 0


def test_a_right_record_stays_until_the_last_left_record_it_can_join_is_late() -> None:
    join = operator(-2.0, 3.0)  # a right record at 12 joins left records from 9 to 14
    join.process_batch([right(12.0, 1)])
    join.process_watermark(Watermark(13.5))

    joined = join.process_batch([left(14.0, 2)])
    join.process_watermark(Watermark(14.0))
    too_late = join.process_batch([left(14.0, 3)])

    assert joined == [(2, 1, 14.0, 12.0, 14.0)]
    assert too_late == []
    assert buffered(join, RIGHT_BUFFER) == []


def test_a_snapshot_keeps_the_buffers_as_they_were_when_it_was_taken() -> None:
    join = operator(-1.0, 1.0)
    join.process_batch([left(5.0, 1)])
    capture = join.capture(1)

    join.process_batch([left(5.0, 2)])

    snapshot = capture.materialize(128)
    [buffer] = [g["left-buffer"] for g in snapshot.keyed.values() if "left-buffer" in g]
    assert buffer == {"a": {5.0: [("a", 5.0, 1)]}}
