"""Event time a window cannot order: NaN or infinite times fail the job, naming who set them.

A NaN in the timer heap compares false with every watermark: before this was refused, no
later window of any key fired, not even at the end of input, and the job still finished.
"""

from __future__ import annotations

import math

import pytest

from lockgate.connectors import CollectionSource
from lockgate.engine import (
    KeyedProcessFunction,
    OperatorError,
    ProcessContext,
    StreamEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from tests.engine.jobs.event_time import WatermarkLog

Reading = tuple[str, float, float, int]  # (sensor, arrival time, measured time, value)
NOT_FINITE = pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])


def readings(bad: float) -> list[Reading]:
    """Sensors 'a' and 'b'; the watermark passes [0, 10) before 'a' measures at ``bad``."""
    return [
        ("a", 1.0, 1.0, 1),
        ("b", 2.0, 2.0, 2),
        ("b", 12.0, 12.0, 3),
        ("a", 13.0, bad, 4),
        ("b", 25.0, 25.0, 5),
    ]


def by(field: int) -> WatermarkStrategy:
    monotonous = WatermarkStrategy.for_monotonous_timestamps()
    return monotonous.with_timestamp_assigner(lambda reading: reading[field])


class Restamp(KeyedProcessFunction[str, Reading, Reading]):
    """Stamps each reading with its measured time instead of its arrival time."""

    def process_element(self, value: Reading, ctx: ProcessContext[str]) -> None:
        ctx.collect_with_timestamp(value, value[2])


@NOT_FINITE
async def test_a_collected_timestamp_that_is_not_finite_fails_naming_its_operator(
    bad: float,
) -> None:
    env = StreamEnvironment(parallelism=1, batch_size=1, auto_watermark_interval=0.0)
    log = WatermarkLog()
    (
        env.from_source(CollectionSource(readings(bad)), uid="readings", watermark_strategy=by(1))
        .key_by(lambda reading: reading[0])
        .process(Restamp(), uid="restamp")
        .key_by(lambda reading: reading[0])
        .window(TumblingEventTimeWindows.of(10.0))
        .reduce(lambda a, b: (a[0], b[1], b[2], a[3] + b[3]), uid="sums")
        .sink_to(log, uid="out")
    )

    with pytest.raises(OperatorError) as failure:
        await env.execute("sums")

    assert failure.value.uid == "restamp"
    assert f"the timestamp {bad} for ('a', 13.0, {bad}, 4)" in str(failure.value.__cause__)
    # the other sensor's window that was due fired; nothing after the bad record did
    assert log.records() == [("a", 1.0, 1.0, 1), ("b", 2.0, 2.0, 2)]


@NOT_FINITE
async def test_a_strategy_timestamp_that_is_not_finite_fails_naming_its_operator(
    bad: float,
) -> None:
    env = StreamEnvironment(parallelism=1, batch_size=1, auto_watermark_interval=0.0)
    (
        env.from_source(CollectionSource(readings(bad)), uid="readings", watermark_strategy=by(2))
        .key_by(lambda reading: reading[0])
        .window(TumblingEventTimeWindows.of(10.0))
        .reduce(lambda a, b: (a[0], b[1], b[2], a[3] + b[3]), uid="sums")
        .sink_to(WatermarkLog(), uid="out")
    )

    with pytest.raises(OperatorError) as failure:
        await env.execute("sums")

    assert failure.value.uid == "readings-watermarks"
    assert f"the event time {bad}; event time must be a finite number" in str(
        failure.value.__cause__
    )
