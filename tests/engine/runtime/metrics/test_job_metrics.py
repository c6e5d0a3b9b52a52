"""job.metrics(): plain data that round-trips through JSON, keyed by strings, stamped on the
wall clock, with rates, watermarks, late records and side outputs of the running job."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import anyio
import orjson

from lockgate.connectors import CollectionSource, CollectSink, IngressSource
from lockgate.engine import (
    ManualClock,
    OutputTag,
    StreamEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from tests.engine.jobs.async_io import wait_until
from tests.engine.jobs.event_time import WatermarkLog, below
from tests.engine.jobs.savepoints import Topic, TopicSource

MONOTONOUS = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(float)


async def doubled(value: int) -> int:
    await anyio.lowlevel.checkpoint()
    return value * 2


def checkpointed_job() -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2)
    env.enable_checkpointing(0.01)
    (
        env.from_source(CollectionSource(range(2_000)), uid="numbers")
        .async_map(doubled, capacity=8, uid="doubled")
        .key_by(lambda value: value % 7)
        .reduce(lambda a, b: a + b, uid="sums")
        .sink_to(CollectSink(), uid="out")
    )
    return env


async def test_asdict_of_the_metrics_round_trips_through_orjson() -> None:
    metrics = (await checkpointed_job().execute("plain")).metrics
    plain = dataclasses.asdict(metrics)

    assert metrics.checkpoints.history  # subtasks by key, phases, async latencies: all there
    assert metrics.async_io("doubled")[0].latency.count > 0
    assert orjson.loads(orjson.dumps(plain)) == plain
    assert orjson.loads(metrics.to_json()) == plain


async def test_subtasks_are_keyed_by_their_chains_first_uid_and_their_index() -> None:
    metrics = (await checkpointed_job().execute("keys")).metrics
    latest = metrics.checkpoints.latest_completed

    keys = {"numbers#0", "numbers#1", "sums#0", "sums#1"}
    assert {subtask.key for subtask in metrics.subtasks} == keys
    assert latest is not None
    assert set(latest.ack_delays) == set(latest.subtasks) == keys
    assert (latest.status, latest.failure_reason) == ("completed", None)


async def test_metrics_and_checkpoints_are_stamped_on_the_wall_clock() -> None:
    started = time.time()
    metrics = (await checkpointed_job().execute("stamps")).metrics
    ended = time.time()

    first = metrics.checkpoints.history[0]
    assert started <= first.trigger_timestamp <= metrics.timestamp <= ended
    assert first.trigger_time < started  # the job's own clock is the monotonic one


async def test_a_job_on_a_manual_clock_is_stamped_with_that_clocks_time() -> None:
    clock, ingress = ManualClock(100.0), IngressSource(capacity=10)
    env = StreamEnvironment(clock=clock)
    env.from_source(ingress, uid="ingress").sink_to(CollectSink(), uid="out")

    async with env.start("manual") as job:
        clock.advance(5.0)
        metrics = job.metrics()
        job.cancel()

    assert metrics.timestamp == 105.0


async def test_a_subtask_waiting_for_input_is_idle_1000_ms_per_second() -> None:
    clock, ingress = ManualClock(), IngressSource(capacity=10)
    env = StreamEnvironment(clock=clock)
    env.from_source(ingress, uid="ingress").disable_chaining().sink_to(CollectSink(), uid="out")

    async with env.start("idle") as job:
        await wait_until(lambda: len(job.metrics().subtasks) == 2)
        await anyio.wait_all_tasks_blocked()  # both subtasks wait for input
        clock.advance(4.0)
        subtasks = job.metrics().subtasks
        job.cancel()

    assert [(s.idle_time_ms_per_second, s.busy_time_ms_per_second) for s in subtasks] == [
        (1000.0, 0.0),
        (1000.0, 0.0),
    ]
    assert [s.records_in_per_second for s in subtasks] == [0.0, 0.0]


async def test_a_stopped_subtask_counts_no_more_time() -> None:
    clock = ManualClock()
    env = StreamEnvironment(clock=clock)
    env.from_source(CollectionSource(range(10)), uid="numbers").sink_to(CollectSink(), uid="out")

    async with env.start("stopped") as job:
        await job.wait()
        before = job.metrics().subtasks
        clock.advance(60.0)
        after = job.metrics().subtasks

    assert [(s.busy_time, s.idle_time) for s in after] == [
        (s.busy_time, s.idle_time) for s in before
    ]


async def test_watermarks_in_and_out_of_each_subtask_are_reported() -> None:
    topic, log = Topic(partitions=1), WatermarkLog()
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0)
    env.from_source(TopicSource(topic), uid="topic", watermark_strategy=MONOTONOUS).sink_to(
        log, uid="log"
    ).disable_chaining()

    async with env.start("watermarks") as job:
        topic.append(range(10), partition_of=lambda _: 0)
        await log.wait_for_watermark(below(9))
        (source,), (sink,) = job.metrics().of("topic"), job.metrics().of("log")
        job.cancel()

    assert (source.current_input_watermark, source.current_output_watermark) == (None, below(9))
    assert sink.current_input_watermark == below(9)


def windowed_job(late: OutputTag[Any] | None) -> StreamEnvironment:
    env = StreamEnvironment(batch_size=1, auto_watermark_interval=0.0)
    events = [("a", 5.0), ("a", 25.0), ("a", 3.0), ("a", 4.0)]  # the last two are late
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event: event[1]
    )
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


async def test_a_window_counts_the_late_records_it_drops() -> None:
    metrics = (await windowed_job(late=None).execute("dropped")).metrics

    (window,) = metrics.of("w")
    assert (window.late_records_dropped, window.side_output_records) == ({"w": 2}, {})


async def test_late_records_sent_to_a_side_output_are_counted_there_not_as_dropped() -> None:
    metrics = (await windowed_job(late=OutputTag("late")).execute("aside")).metrics

    (window,) = metrics.of("w")
    assert (window.late_records_dropped, window.side_output_records) == ({"w": 0}, {"late": 2})
