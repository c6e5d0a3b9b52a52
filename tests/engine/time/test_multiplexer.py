"""WatermarkOutputMultiplexer: the splits' watermarks combined as the minimum, without a loop."""

from __future__ import annotations

from lockgate.engine import Watermark, WatermarkStatus
from lockgate.engine.time.multiplexer import WatermarkOutputMultiplexer

IDLE, ACTIVE = WatermarkStatus(idle=True), WatermarkStatus(idle=False)


def _of(*outputs: str) -> WatermarkOutputMultiplexer:
    multiplexer = WatermarkOutputMultiplexer()
    for output in outputs:
        multiplexer.register(output)
    return multiplexer


def test_the_combined_watermark_is_the_minimum_over_the_outputs() -> None:
    multiplexer = _of("a", "b")

    assert multiplexer.emit("a", 10.0) == []  # b has none yet: it holds the watermark back
    assert multiplexer.emit("b", 4.0) == [Watermark(4.0)]
    assert multiplexer.emit("b", 12.0) == [Watermark(10.0)]


def test_the_combined_watermark_never_goes_back() -> None:
    multiplexer = _of("a")
    multiplexer.emit("a", 10.0)
    multiplexer.register("b")

    assert multiplexer.emit("b", 3.0) == []
    assert multiplexer.combined == 10.0


def test_an_idle_output_no_longer_holds_the_others_back() -> None:
    multiplexer = _of("a", "b")
    multiplexer.emit("a", 10.0)

    assert multiplexer.mark_idle("b") == [Watermark(10.0)]
    assert multiplexer.emit("a", 12.0) == [Watermark(12.0)]


def test_emitting_on_an_idle_output_makes_it_count_again() -> None:
    multiplexer = _of("a", "b")
    multiplexer.emit("a", 10.0)
    multiplexer.mark_idle("b")

    assert multiplexer.emit("b", 11.0) == []
    assert multiplexer.emit("a", 20.0) == [Watermark(11.0)]


def test_the_combined_output_is_idle_while_every_output_is() -> None:
    multiplexer = _of("a", "b")

    assert multiplexer.mark_idle("a") == []
    assert multiplexer.mark_idle("b") == [IDLE]
    assert multiplexer.mark_active("a") == [ACTIVE]
    assert multiplexer.emit("a", 1.0) == [Watermark(1.0)]


def test_an_unregistered_output_no_longer_holds_the_others_back() -> None:
    multiplexer = _of("a", "b")
    multiplexer.emit("a", 10.0)

    assert multiplexer.unregister("b") == [Watermark(10.0)]
    assert multiplexer.outputs == {"a": 10.0}


def test_the_last_output_unregistered_changes_nothing() -> None:
    multiplexer = _of("a")
    multiplexer.emit("a", 10.0)

    assert multiplexer.unregister("a") == []
    assert (multiplexer.combined, multiplexer.idle) == (10.0, False)


def test_deferred_changes_combine_only_when_updated() -> None:
    multiplexer = _of("a", "b")
    multiplexer.mark_idle("b")

    assert multiplexer.emit("a", 30.0, deferred=True) == []
    assert multiplexer.emit("b", 20.0, deferred=True) == []
    assert multiplexer.update() == [Watermark(20.0)]
