"""TimestampsAndWatermarks: a strategy applied to a subtask's records, split by split ☐."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import pytest

from lockgate.engine import (
    ManualClock,
    Watermark,
    WatermarkGenerator,
    WatermarkGeneratorContext,
    WatermarkOutput,
    WatermarkStatus,
    WatermarkStrategy,
)
from lockgate.engine.time.timestamps_and_watermarks import SplitRun, TimestampsAndWatermarks
from tests.engine.jobs.event_time import below

IDLE, ACTIVE = WatermarkStatus(idle=True), WatermarkStatus(idle=False)
MONOTONOUS = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(float)


class EveryRecord(WatermarkGenerator[Any]):
    """A punctuated generator: a watermark at each record's time."""

    def on_event(self, event: Any, timestamp: float, output: WatermarkOutput) -> None:
        output.emit_watermark(Watermark(timestamp))


class CountsPeriodicCalls(WatermarkGenerator[Any]):
    """Emits the clock's time at each periodic emission; ``calls`` lists them all."""

    calls: ClassVar[list[WatermarkGeneratorContext]] = []

    def __init__(self, context: WatermarkGeneratorContext) -> None:
        self.context = context

    def on_event(self, event: Any, timestamp: float, output: WatermarkOutput) -> None:
        pass

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        self.calls.append(self.context)
        output.emit_watermark(Watermark(self.context.clock.now()))


def _applied(
    strategy: WatermarkStrategy = MONOTONOUS,
    splits: list[str] | None = None,
    clock: ManualClock | None = None,
) -> TimestampsAndWatermarks:
    return TimestampsAndWatermarks(
        strategy, uid="stamps", subtask_index=0, clock=clock or ManualClock(), splits=splits
    )


COUNTED = WatermarkStrategy.for_generator(CountsPeriodicCalls).with_timestamp_assigner(float)
PUNCTUATED = WatermarkStrategy.for_generator(lambda context: EveryRecord()).with_timestamp_assigner(
    float
)


def test_a_punctuated_watermark_comes_after_the_record_it_was_emitted_for() -> None:
    applied = _applied(PUNCTUATED)

    assert applied.on_batch([3.0, 1.0, 5.0], now=0.0) == [3.0, 1.0, 5.0]
    assert applied.take_changes() == [(1, Watermark(3.0)), (3, Watermark(5.0))]


def test_a_periodic_generator_emits_nothing_per_record() -> None:
    applied = _applied()

    applied.on_batch([3.0, 1.0, 5.0], now=0.0)

    assert applied.take_changes() == []
    assert applied.on_periodic_emit(now=0.0, interval=0.2) == [Watermark(below(5.0))]


def test_generators_are_asked_at_most_once_per_interval() -> None:
    clock = ManualClock(100.0)
    CountsPeriodicCalls.calls = []
    applied = _applied(COUNTED, clock=clock)

    asked = []
    for step in range(10):  # every 0.1 s for a second, with an interval of 0.25 s
        clock.advance(0.1 if step else 0.0)
        asked += applied.on_periodic_emit(clock.now(), interval=0.25)

    assert [w.timestamp for w in asked] == pytest.approx([100.0, 100.3, 100.6, 100.9])
    assert len(CountsPeriodicCalls.calls) == 4


def test_the_first_records_do_not_wait_for_the_interval() -> None:
    applied = _applied()
    assert applied.on_periodic_emit(now=0.0, interval=10.0) == []  # nothing read yet

    applied.on_batch([1.0], now=1.0)

    assert applied.on_periodic_emit(now=1.0, interval=10.0) == [Watermark(below(1.0))]
    applied.on_batch([2.0], now=2.0)
    assert applied.on_periodic_emit(now=2.0, interval=10.0) == []


def test_an_event_time_that_is_not_finite_is_refused_naming_its_record() -> None:
    applied = _applied()

    with pytest.raises(ValueError, match=r"record nan the event time nan; event time must"):
        applied.on_batch([6.0, math.nan], now=0.0)


def test_the_watermark_of_a_subtask_is_the_minimum_over_its_splits() -> None:
    applied = _applied(PUNCTUATED, splits=["a", "b"])

    applied.on_batch([10.0, 4.0, 12.0], 0.0, runs=[SplitRun("a", 1), SplitRun("b", 2)])

    assert applied.take_changes() == [(2, Watermark(4.0)), (3, Watermark(10.0))]
    assert applied.split_watermarks == {"a": 10.0, "b": 12.0}


def test_each_split_has_a_generator_of_its_own() -> None:
    CountsPeriodicCalls.calls = []
    applied = _applied(COUNTED, splits=["p0", "p1"])

    applied.on_periodic_emit(now=0.0, interval=0.0)

    assert [c.split_id for c in CountsPeriodicCalls.calls] == ["p0", "p1"]
    assert {(c.uid, c.subtask_index) for c in CountsPeriodicCalls.calls} == {("stamps", 0)}


def test_a_split_without_records_holds_the_watermark_back() -> None:
    applied = _applied(PUNCTUATED, splits=["a", "b"])

    applied.on_batch([10.0, 11.0], 0.0, runs=[SplitRun("a", 2)])

    assert applied.take_changes() == []
    assert applied.current == -math.inf


def test_a_finished_split_stops_holding_the_watermark_back() -> None:
    applied = _applied(PUNCTUATED, splits=["a", "b"])
    applied.on_batch([10.0, 3.0], 0.0, runs=[SplitRun("a", 1), SplitRun("b", 1)])
    applied.take_changes()

    applied.on_batch([], 0.0, runs=[SplitRun("b", 0, finished=True)])

    assert applied.take_changes() == [(0, Watermark(10.0))]
    assert applied.split_watermarks == {"a": 10.0}


def test_a_split_the_reader_says_is_idle_does_not_hold_the_watermark_back() -> None:
    applied = _applied(PUNCTUATED, splits=["a", "b"])

    applied.on_batch([10.0], 0.0, runs=[SplitRun("a", 1)], idle={"b"})

    assert applied.take_changes() == [(1, Watermark(10.0))]


def test_a_split_the_reader_no_longer_names_idle_counts_again() -> None:
    applied = _applied(PUNCTUATED, splits=["a", "b"])
    applied.on_batch([], 0.0, runs=[], idle={"a", "b"})
    assert applied.take_changes() == [(0, IDLE)]

    applied.on_batch([], 0.0, runs=[], idle={"b"})

    assert applied.take_changes() == [(0, ACTIVE)]


def test_a_split_goes_idle_after_the_timeout_without_records() -> None:
    applied = _applied(MONOTONOUS.with_idleness(5.0), splits=["busy", "quiet"])
    applied.on_batch([1.0, 2.0], 10.0, runs=[SplitRun("busy", 1), SplitRun("quiet", 1)])
    assert applied.on_periodic_emit(now=10.0, interval=0.0) == [Watermark(below(1.0))]

    applied.on_batch([7.0], 14.0, runs=[SplitRun("busy", 1)])
    assert applied.on_periodic_emit(now=14.0, interval=0.0) == [Watermark(below(2.0))]

    assert applied.on_periodic_emit(now=15.0, interval=0.0) == [Watermark(below(7.0))]
    assert applied.split_watermarks == {"busy": below(7.0), "quiet": None}


def test_an_idle_split_counts_again_once_its_next_records_bring_a_watermark() -> None:
    applied = _applied(MONOTONOUS.with_idleness(5.0))
    applied.on_batch([1.0], 0.0)
    applied.on_periodic_emit(now=0.0, interval=0.0)
    assert applied.on_periodic_emit(now=5.0, interval=0.0) == [IDLE]

    applied.on_batch([2.0], 7.0)

    assert applied.on_periodic_emit(now=7.0, interval=0.0) == [ACTIVE, Watermark(below(2.0))]


def test_idleness_counts_from_the_first_periodic_emission_when_nothing_was_read() -> None:
    applied = _applied(MONOTONOUS.with_idleness(5.0))

    assert applied.on_periodic_emit(now=100.0, interval=0.0) == []
    assert applied.on_periodic_emit(now=104.0, interval=0.0) == []
    assert applied.on_periodic_emit(now=105.0, interval=0.0) == [IDLE]


def test_a_subtask_without_input_is_idle_for_good() -> None:
    applied = _applied(MONOTONOUS.with_idleness(5.0), splits=[])

    assert applied.mark_without_input() == IDLE
    assert applied.mark_without_input() is None
    assert applied.on_periodic_emit(now=100.0, interval=0.0) == []


def test_nothing_is_due_once_finished() -> None:
    applied = _applied(MONOTONOUS.with_idleness(1.0))
    applied.on_batch([1.0], 0.0)
    applied.finish()

    assert applied.on_periodic_emit(now=10.0, interval=0.0) == []


def test_a_periodic_emission_combines_the_splits_once_every_one_was_asked() -> None:
    applied = _applied(MONOTONOUS.with_idleness(5.0), splits=["a", "b"])
    applied.on_batch([10.0, 5.0], 0.0, runs=[SplitRun("a", 1), SplitRun("b", 1)])
    applied.on_periodic_emit(now=0.0, interval=0.0)
    assert applied.on_periodic_emit(now=5.0, interval=0.0) == [IDLE]

    applied.on_batch([30.0, 20.0], 7.0, runs=[SplitRun("a", 1), SplitRun("b", 1)])

    assert applied.on_periodic_emit(now=7.0, interval=0.0) == [ACTIVE, Watermark(below(20.0))]
