"""Watermark generators in jobs: punctuated ones act per record, periodic ones per interval."""

from __future__ import annotations

import math
import random
from typing import Any, ClassVar

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    OutputTag,
    StreamEnvironment,
    TumblingEventTimeWindows,
    Watermark,
    WatermarkGenerator,
    WatermarkGeneratorContext,
    WatermarkOutput,
    WatermarkStrategy,
)
from lockgate.engine.time.clock import ManualClock
from tests.engine.jobs.event_time import WatermarkLog
from tests.engine.jobs.savepoints import Topic, TopicSource

Event = tuple[str, float]  # (key, event time)
LATE = OutputTag[Event]("late")


class AtEachRecord(WatermarkGenerator[Any]):
    """Punctuated: after a record of time t, no record at or below t follows."""

    def on_event(self, event: Any, timestamp: float, output: WatermarkOutput) -> None:
        output.emit_watermark(Watermark(timestamp))


PUNCTUATED = WatermarkStrategy.for_generator(lambda context: AtEachRecord())


def shuffled_events(count: int) -> list[Event]:
    """Events mostly in time order, some up to 30 behind: many are late for windows of 10."""
    jitter = random.Random(5)
    return [("k", float(i - jitter.randrange(30) * (jitter.random() < 0.2))) for i in range(count)]


def late_per_record(events: list[Event], size: float) -> list[Event]:
    """The events late for their window when the watermark follows each record at once."""
    late, newest = [], -math.inf
    for event in events:
        end = (event[1] // size + 1) * size
        if math.nextafter(end, -math.inf) <= newest:  # the window's max timestamp has passed
            late.append(event)
        newest = max(newest, event[1])
    return late


async def test_a_punctuated_generator_makes_every_records_lateness_deterministic() -> None:
    events = shuffled_events(3000)
    env = StreamEnvironment()  # batches of 512 records, a periodic interval of 0.2 s
    late = CollectSink[Event]()
    strategy = PUNCTUATED.with_timestamp_assigner(lambda event: event[1])
    sums = (
        env.from_source(CollectionSource(events), uid="events", watermark_strategy=strategy)
        .key_by(lambda event: event[0])
        .window(TumblingEventTimeWindows.of(10.0))
        .side_output_late_data(LATE)
        .reduce(lambda a, b: a, uid="windows")
    )
    sums.sink_to(CollectSink(), uid="out")
    sums.side_output(LATE).sink_to(late, uid="late")

    await env.execute("punctuated")

    expected = late_per_record(events, 10.0)
    assert len(expected) > 100
    assert sorted(late.results) == sorted(expected)


async def test_a_punctuated_watermark_leaves_right_after_the_record_it_was_emitted_for() -> None:
    env = StreamEnvironment()
    log = WatermarkLog()
    strategy = PUNCTUATED.with_timestamp_assigner(float)
    times = [1.0, 3.0, 2.0, 7.0, 7.0, 4.0, 9.0]
    env.from_source(CollectionSource(times), uid="times", watermark_strategy=strategy).sink_to(
        log, uid="log"
    )

    await env.execute("right-after")

    assert log.logs[0] == [
        *(1.0, Watermark(1.0), 3.0, Watermark(3.0), 2.0, 7.0, Watermark(7.0), 7.0, 4.0),
        *(9.0, Watermark(9.0), Watermark(math.inf)),
    ]


class EmitsTheClock(WatermarkGenerator[Any]):
    """Periodic: emits the job clock's time; ``asked`` counts the periodic emissions."""

    asked: ClassVar[list[float]] = []

    def __init__(self, context: WatermarkGeneratorContext) -> None:
        self.clock = context.clock

    def on_event(self, event: Any, timestamp: float, output: WatermarkOutput) -> None:
        pass

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        self.asked.append(self.clock.now())
        output.emit_watermark(Watermark(self.clock.now()))


async def test_a_periodic_generator_is_asked_on_the_interval_of_the_jobs_clock() -> None:
    EmitsTheClock.asked = []
    clock, topic = ManualClock(), Topic(partitions=1)
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=5.0, clock=clock)
    log = WatermarkLog()
    strategy = WatermarkStrategy.for_generator(EmitsTheClock).with_timestamp_assigner(float)
    env.from_source(TopicSource(topic), uid="topic", watermark_strategy=strategy).sink_to(
        log, uid="log"
    )

    async with env.start("periodic") as job:
        for step in range(1, 4):
            topic.append(range(100), partition_of=lambda _: 0)  # ten batches between two asks
            await log.changes.wait_until(lambda: len(log.records()) == 100 * step)  # noqa: B023
            clock.advance(5.0)
            await log.wait_for_watermark(5.0 * step)
        topic.close()
        await job.wait()

    # At the start, at once after the first records (the schedule starts there), then once
    # per interval though ten batches came in between.
    assert EmitsTheClock.asked == [0.0, 0.0, 5.0, 10.0, 15.0]
    assert log.watermarks() == [0.0, 5.0, 10.0, 15.0, math.inf]
