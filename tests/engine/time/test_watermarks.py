"""WatermarkStrategy and WatermarkValve, without an event loop."""

from __future__ import annotations

import pytest

from lockgate.engine import (
    ManualClock,
    Watermark,
    WatermarkGeneratorContext,
    WatermarkStatus,
    WatermarkStrategy,
)
from lockgate.engine.time.watermarks import WatermarkValve

IDLE, ACTIVE = WatermarkStatus(idle=True), WatermarkStatus(idle=False)


def test_invalid_strategy_options_are_refused_naming_them() -> None:
    with pytest.raises(ValueError, match="max_out_of_orderness"):
        WatermarkStrategy.for_bounded_out_of_orderness(-1.0)
    with pytest.raises(ValueError, match="idleness timeout"):
        WatermarkStrategy().with_idleness(0.0)
    with pytest.raises(ValueError, match="max_drift"):
        WatermarkStrategy().with_watermark_alignment("g", -1.0)
    with pytest.raises(ValueError, match="update_interval"):
        WatermarkStrategy().with_watermark_alignment("g", 1.0, update_interval=0.0)


def test_a_factory_that_returns_no_generator_is_refused_naming_the_operator() -> None:
    strategy = WatermarkStrategy.for_generator(lambda context: "not a generator")  # type: ignore[arg-type,return-value]

    with pytest.raises(TypeError, match=r"operator 'stamps'.*must return a WatermarkGenerator"):
        strategy.create_generator(WatermarkGeneratorContext("stamps", 0, None, ManualClock()))


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
