"""WatermarkStrategy, WatermarkGenerator and WatermarkValve, without an event loop."""

from __future__ import annotations

import math

import pytest

from lockgate.engine import Watermark, WatermarkStatus, WatermarkStrategy
from lockgate.engine.time.watermarks import WatermarkGenerator, WatermarkValve
from tests.engine.jobs.event_time import below

IDLE, ACTIVE = WatermarkStatus(idle=True), WatermarkStatus(idle=False)


def _generator(out_of_orderness: float = 0.0, idleness: float | None = None) -> WatermarkGenerator:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(out_of_orderness)
    strategy = strategy.with_timestamp_assigner(lambda record: record)
    if idleness is not None:
        strategy = strategy.with_idleness(idleness)
    return strategy.create_generator()


def test_a_generator_without_records_has_no_watermark_due() -> None:
    generator = _generator()
    assert generator.current == -math.inf
    assert generator.take_due(now=0.0, interval=0.0) is None


def test_the_watermark_trails_the_newest_timestamp_by_the_out_of_orderness() -> None:
    generator = _generator(out_of_orderness=5.0)
    generator.on_records([10.0, 30.0, 20.0], now=0.0)
    assert generator.take_due(now=0.0, interval=0.0) == Watermark(below(25.0))


def test_a_record_exactly_as_late_as_allowed_is_still_above_the_watermark() -> None:
    generator = _generator(out_of_orderness=5.0)
    generator.on_records([30.0], now=0.0)
    assert generator.current < 25.0


def test_older_timestamps_never_move_the_watermark_back() -> None:
    generator = _generator()
    generator.on_records([30.0], now=0.0)
    generator.take_due(now=0.0, interval=0.0)
    generator.on_records([3.0], now=0.0)
    assert generator.current == below(30.0)
    assert generator.take_due(now=1.0, interval=0.0) is None


@pytest.mark.parametrize("time", [math.nan, math.inf, -math.inf])
def test_an_event_time_that_is_not_finite_is_refused_naming_its_record(time: float) -> None:
    generator = _generator()
    generator.on_records([5.0], now=0.0)

    with pytest.raises(ValueError, match=f"record {time} the event time {time}; event time must"):
        generator.on_records([6.0, time], now=0.0)

    assert generator.current == below(5.0)


def test_a_watermark_waits_for_the_interval_since_the_last_one() -> None:
    generator = _generator()
    generator.on_records([1.0], now=100.0)
    assert generator.take_due(now=100.0, interval=0.2) == Watermark(below(1.0))
    generator.on_records([2.0], now=100.1)
    assert generator.take_due(now=100.1, interval=0.2) is None
    assert generator.take_due(now=100.2, interval=0.2) == Watermark(below(2.0))


def test_a_finished_generator_has_nothing_due() -> None:
    generator = _generator(idleness=1.0)
    generator.on_records([1.0], now=0.0)
    generator.finish()
    assert generator.take_due(now=10.0, interval=0.0) is None
    assert generator.take_status(now=10.0) is None


def test_a_generator_goes_idle_after_the_timeout_without_records() -> None:
    generator = _generator(idleness=5.0)
    generator.on_records([1.0], now=10.0)
    assert generator.take_status(now=14.0) is None
    assert generator.take_status(now=15.0) == IDLE
    assert generator.take_status(now=16.0) is None


def test_an_idle_generator_is_active_again_with_its_next_records() -> None:
    generator = _generator(idleness=5.0)
    generator.on_records([1.0], now=0.0)
    generator.take_status(now=5.0)
    generator.on_records([2.0], now=7.0)
    assert generator.take_status(now=7.0) == ACTIVE


def test_a_generator_that_never_reads_goes_idle_counted_from_its_first_check() -> None:
    generator = _generator(idleness=5.0)
    assert generator.take_status(now=100.0) is None
    assert generator.take_status(now=104.0) is None
    assert generator.take_status(now=105.0) == IDLE


def test_a_strategy_without_a_timestamp_assigner_says_how_to_add_one() -> None:
    with pytest.raises(ValueError, match="with_timestamp_assigner"):
        WatermarkStrategy.for_monotonous_timestamps().create_generator()


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: WatermarkStrategy.for_bounded_out_of_orderness(-1.0), "max_out_of_orderness"),
        (lambda: WatermarkStrategy().with_idleness(0.0), "idleness timeout"),
    ],
)
def test_invalid_strategy_options_are_refused(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


def test_the_valve_lets_through_the_minimum_over_its_channels() -> None:
    valve = WatermarkValve(2)
    assert valve.on_watermark(0, Watermark(10.0)) == []
    assert valve.on_watermark(1, Watermark(4.0)) == [Watermark(4.0)]
    assert valve.on_watermark(1, Watermark(12.0)) == [Watermark(10.0)]


def test_the_valve_ignores_a_channel_watermark_that_goes_back() -> None:
    valve = WatermarkValve(1)
    valve.on_watermark(0, Watermark(10.0))
    assert valve.on_watermark(0, Watermark(5.0)) == []
    assert valve.current == 10.0


def test_an_ended_channel_no_longer_holds_the_others_back() -> None:
    valve = WatermarkValve(3)
    valve.on_watermark(0, Watermark(10.0))
    valve.on_watermark(1, Watermark(20.0))
    assert valve.on_end(2) == [Watermark(10.0)]
    assert valve.on_end(0) == [Watermark(20.0)]
    assert valve.on_end(1) == []


def test_the_valve_never_lets_the_same_watermark_through_twice() -> None:
    valve = WatermarkValve(2)
    valve.on_watermark(0, Watermark(5.0))
    valve.on_watermark(1, Watermark(5.0))
    assert valve.on_watermark(0, Watermark(7.0)) == []


def test_an_idle_channel_no_longer_holds_the_others_back() -> None:
    valve = WatermarkValve(2)
    valve.on_watermark(0, Watermark(10.0))
    assert valve.on_status(1, IDLE) == [Watermark(10.0)]
    assert valve.on_watermark(0, Watermark(12.0)) == [Watermark(12.0)]


def test_watermarks_of_an_idle_channel_are_ignored() -> None:
    valve = WatermarkValve(2)
    valve.on_status(1, IDLE)
    valve.on_watermark(0, Watermark(10.0))
    assert valve.on_watermark(1, Watermark(3.0)) == []
    assert valve.current == 10.0


def test_a_channel_back_from_idle_counts_once_it_caught_up() -> None:
    valve = WatermarkValve(2)
    valve.on_watermark(0, Watermark(10.0))
    valve.on_status(1, IDLE)
    assert valve.on_status(1, ACTIVE) == []
    assert valve.on_watermark(1, Watermark(4.0)) == []  # behind: not aligned, not counted
    assert valve.on_watermark(0, Watermark(20.0)) == [Watermark(20.0)]
    assert valve.on_watermark(1, Watermark(25.0)) == []  # caught up: counted from now on
    assert valve.on_watermark(0, Watermark(30.0)) == [Watermark(25.0)]


def test_a_subtask_is_idle_while_every_open_channel_is() -> None:
    valve = WatermarkValve(3)
    valve.on_end(2)
    assert valve.on_status(0, IDLE) == []
    assert valve.on_status(1, IDLE) == [IDLE]
    assert valve.on_status(0, ACTIVE) == [ACTIVE]
    assert valve.idle is False


def test_a_subtask_goes_idle_when_its_last_active_channel_ends() -> None:
    valve = WatermarkValve(2)
    valve.on_status(0, IDLE)
    assert valve.on_end(1) == [IDLE]


def test_a_generator_without_input_is_idle_for_good() -> None:
    generator = _generator(idleness=5.0)

    assert generator.mark_without_input() == IDLE
    assert generator.mark_without_input() is None
    assert generator.take_status(now=100.0) is None
