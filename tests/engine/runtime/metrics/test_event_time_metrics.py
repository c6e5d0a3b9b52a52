"""job.metrics() of event time: late records per record with a punctuated generator, each
split's watermark, and how far an aligned source runs ahead of its group."""

from __future__ import annotations

from typing import Any

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    ManualClock,
    OutputTag,
    StreamEnvironment,
    TumblingEventTimeWindows,
    Watermark,
    WatermarkGenerator,
    WatermarkOutput,
    WatermarkStrategy,
)
from tests.engine.jobs.async_io import wait_until
from tests.engine.jobs.event_time import Partitions, PartitionsSource, WatermarkLog, below

MONOTONOUS = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(float)


class AtEachRecord(WatermarkGenerator[Any]):
    def on_event(self, event: Any, timestamp: float, output: WatermarkOutput) -> None:
        output.emit_watermark(Watermark(timestamp))


def punctuated_window_job(late: OutputTag[Any] | None) -> StreamEnvironment:
    env = StreamEnvironment()  # the default batch size: 512
    events = [("a", 5.0), ("a", 25.0), ("a", 3.0), ("a", 4.0), ("a", 26.0), ("a", 9.0)]
    strategy = WatermarkStrategy.for_generator(lambda context: AtEachRecord())
    strategy = strategy.with_timestamp_assigner(lambda event: event[1])
    window = (
        env.from_source(CollectionSource(events), uid="events", watermark_strategy=strategy)
        .key_by(lambda event: event[0])
        .window(TumblingEventTimeWindows.of(10.0))
    )
    if late is not None:
        window = window.side_output_late_data(late)
    sums = window.reduce(lambda a, b: (a[0], a[1] + b[1]), uid="w")
    sums.sink_to(CollectSink(), uid="out")
    if late is not None:
        sums.side_output(late).sink_to(CollectSink(), uid="late-out")
    return env


async def test_late_records_dropped_count_each_record_late_at_the_default_batch_size() -> None:
    metrics = (await punctuated_window_job(late=None).execute("dropped")).metrics

    (window,) = metrics.of("w")
    assert window.late_records_dropped == {"w": 3}  # 3, 4 and 9: their window had fired


async def test_records_sent_to_the_late_output_count_each_record_late() -> None:
    metrics = (await punctuated_window_job(late=OutputTag("late")).execute("aside")).metrics

    (window,) = metrics.of("w")
    assert (window.late_records_dropped, window.side_output_records) == ({"w": 0}, {"late": 3})


async def test_each_split_of_a_source_subtask_reports_its_watermark() -> None:
    clock, partitions = ManualClock(), Partitions(3)
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0, clock=clock)
    log = WatermarkLog()
    strategy = MONOTONOUS.with_idleness(10.0)
    env.from_source(PartitionsSource(partitions), uid="parts", watermark_strategy=strategy).sink_to(
        log, uid="log"
    )

    async with env.start("splits") as job:
        partitions.append(0, [float(t) for t in range(100)])
        partitions.append(1, [float(t) for t in range(10)])
        await log.changes.wait_until(lambda: len(log.records()) == 110)
        before_idle = job.metrics().of("parts")[0]
        clock.advance(10.0)  # every split read nothing for the idleness timeout
        await wait_until(lambda: job.metrics().of("parts")[0].split_watermarks["p0"] is None)
        idle = job.metrics().of("parts")[0]
        job.cancel()

    assert before_idle.split_watermarks == {"p0": below(99), "p1": below(9), "p2": None}
    assert before_idle.current_output_watermark is None  # p2 held it back
    assert idle.split_watermarks == {"p0": None, "p1": None, "p2": None}


async def test_a_source_without_splits_of_its_own_reports_none() -> None:
    env = StreamEnvironment(auto_watermark_interval=0.0)
    source = CollectionSource([1.0, 2.0])
    env.from_source(source, uid="numbers", watermark_strategy=MONOTONOUS).sink_to(CollectSink())

    metrics = (await env.execute("no-splits")).metrics

    (numbers,) = metrics.of("numbers")
    assert (numbers.split_watermarks, numbers.watermark_alignment_drift) == ({}, None)


async def test_an_aligned_source_reports_how_far_it_runs_ahead_of_its_group() -> None:
    clock, fast, slow = ManualClock(), Partitions(1), Partitions(1)
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0, clock=clock)
    aligned = MONOTONOUS.with_watermark_alignment("g", max_drift=10.0)
    fast_log, slow_log = WatermarkLog(), WatermarkLog()
    env.from_source(PartitionsSource(fast), uid="fast", watermark_strategy=aligned).sink_to(
        fast_log
    )
    env.from_source(PartitionsSource(slow), uid="slow", watermark_strategy=aligned).sink_to(
        slow_log
    )

    async with env.start("drift") as job:
        slow.append(0, [float(t) for t in range(5)])
        await slow_log.wait_for_watermark(below(4))
        fast.append(0, [float(t) for t in range(1000)])
        await wait_until(lambda: clock.sleepers == 1)  # the fast source paused
        metrics = job.metrics()
        job.cancel()

    (fast_metrics,), (slow_metrics,) = metrics.of("fast"), metrics.of("slow")
    assert fast_metrics.current_output_watermark is not None
    assert fast_metrics.watermark_alignment_drift == fast_metrics.current_output_watermark - below(
        4
    )
    assert fast_metrics.watermark_alignment_drift > 10.0
    assert slow_metrics.watermark_alignment_drift == 0.0
