"""Watermarks in running jobs: made at sources, combined over inputs, fenced by async_map."""

from __future__ import annotations

import math
import random
from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource
from lockgate.engine import (
    GraphError,
    KeyedProcessFunction,
    OutputTag,
    ProcessContext,
    StreamEnvironment,
    WatermarkStrategy,
)
from lockgate.engine.time.clock import ManualClock
from tests.engine.jobs.event_time import WatermarkLog, below
from tests.engine.jobs.savepoints import Topic, TopicSource

MONOTONOUS = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(float)


async def test_a_source_emits_a_watermark_after_each_batch_and_infinity_at_its_end() -> None:
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0)
    log = WatermarkLog()
    env.from_source(
        CollectionSource(range(1000)), uid="numbers", watermark_strategy=MONOTONOUS
    ).sink_to(log, uid="log")

    await env.execute("watermarks")

    assert log.watermarks() == [below(10 * k + 9) for k in range(100)] + [math.inf]
    assert log.records() == list(range(1000))
    assert log.late_records() == []


async def test_watermarks_wait_for_the_auto_watermark_interval() -> None:
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=3600.0)
    log = WatermarkLog()
    env.from_source(
        CollectionSource(range(1000)), uid="numbers", watermark_strategy=MONOTONOUS
    ).sink_to(log, uid="log")

    await env.execute("watermarks")

    assert log.watermarks() == [below(9), math.inf]


async def test_a_pending_watermark_leaves_when_due_though_no_record_follows() -> None:
    clock = ManualClock()
    topic = Topic(partitions=1)
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=5.0, clock=clock)
    log = WatermarkLog()
    env.from_source(TopicSource(topic), uid="topic", watermark_strategy=MONOTONOUS).sink_to(
        log, uid="log"
    )

    async with env.start("pending") as job:
        topic.append(range(10), partition_of=lambda _: 0)
        await log.wait_for_watermark(below(9))
        topic.append(range(10, 20), partition_of=lambda _: 0)
        await log.changes.wait_until(lambda: len(log.records()) == 20)
        assert log.watermarks() == [below(9)]
        clock.advance(5.0)
        await log.wait_for_watermark(below(19))
        topic.close()
        await job.wait()

    assert log.watermarks() == [below(9), below(19), math.inf]


async def test_a_subtask_takes_the_minimum_watermark_of_its_inputs() -> None:
    fast, slow = Topic(partitions=1), Topic(partitions=1)
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0)
    log = WatermarkLog()
    fast_stream = env.from_source(TopicSource(fast), uid="fast", watermark_strategy=MONOTONOUS)
    slow_stream = env.from_source(TopicSource(slow), uid="slow", watermark_strategy=MONOTONOUS)
    fast_stream.union(slow_stream).sink_to(log, uid="log")

    async with env.start("minimum") as job:
        fast.append(range(100), partition_of=lambda _: 0)
        slow.append(range(5), partition_of=lambda _: 0)
        await log.changes.wait_until(lambda: len(log.records()) == 105)
        await log.wait_for_watermark(below(4))
        slow.close()  # an ended input no longer holds the other back
        await log.wait_for_watermark(below(99))
        fast.close()
        await job.wait()

    watermarks = log.watermarks()
    assert watermarks[watermarks.index(below(4)) + 1] == below(99)
    assert max(w for w in watermarks if w < below(99)) == below(4)
    assert watermarks[-1] == math.inf
    assert watermarks == sorted(set(watermarks))


class _WatermarkAtEachRecord(KeyedProcessFunction[Any, int, tuple[int, float]]):
    def process_element(self, value: int, ctx: ProcessContext[Any]) -> list[tuple[int, float]]:
        return [(value, ctx.current_watermark())]


async def test_a_process_function_reads_the_watermark_of_its_subtask() -> None:
    env = StreamEnvironment(parallelism=2, batch_size=10, auto_watermark_interval=0.0)
    log = WatermarkLog()
    (
        env.from_source(
            CollectionSource(range(1000)),
            uid="numbers",
            parallelism=1,
            watermark_strategy=MONOTONOUS,
        )
        .key_by(lambda x: x % 7)
        .process(_WatermarkAtEachRecord(), uid="seen")
        .sink_to(log, uid="log")
    )

    await env.execute("current-watermark")

    seen = log.records()
    assert sorted(value for value, _ in seen) == list(range(1000))
    assert all(watermark < value for value, watermark in seen)
    assert max(watermark for _, watermark in seen) >= below(900)


async def test_unordered_async_map_reorders_results_but_never_across_a_watermark() -> None:
    latency = random.Random(7)

    async def slow_echo(record: int) -> int:
        await anyio.sleep(latency.random() / 1000)
        return record

    env = StreamEnvironment(batch_size=20, auto_watermark_interval=0.0)
    log = WatermarkLog()
    (
        env.from_source(CollectionSource(range(2000)), uid="numbers", watermark_strategy=MONOTONOUS)
        .async_map(slow_echo, capacity=100, ordered=False, uid="echo")
        .sink_to(log, uid="log")
    )

    await env.execute("fenced")

    records = log.records()
    assert sorted(records) == list(range(2000))
    assert records != sorted(records), "the calls completed in input order: nothing was tested"
    assert len(log.watermarks()) > 50
    assert log.late_records() == []


def test_a_watermark_strategy_without_a_timestamp_assigner_fails_the_build() -> None:
    env = StreamEnvironment()
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(1.0)

    with pytest.raises(GraphError, match=r"'numbers-watermarks'.*with_timestamp_assigner"):
        env.from_source(CollectionSource(range(3)), uid="numbers", watermark_strategy=strategy)


def test_a_negative_auto_watermark_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="auto_watermark_interval"):
        StreamEnvironment(auto_watermark_interval=-1.0)


async def test_an_idle_source_stops_holding_back_the_watermark_until_it_reads_again() -> None:
    clock = ManualClock()
    busy, quiet = Topic(partitions=1), Topic(partitions=1)
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0, clock=clock)
    log = WatermarkLog()
    with_idleness = MONOTONOUS.with_idleness(10.0)
    busy_stream = env.from_source(TopicSource(busy), uid="busy", watermark_strategy=MONOTONOUS)
    quiet_stream = env.from_source(
        TopicSource(quiet), uid="quiet", watermark_strategy=with_idleness
    )
    busy_stream.union(quiet_stream).sink_to(log, uid="log")

    async with env.start("idleness") as job:
        busy.append(range(100), partition_of=lambda _: 0)
        quiet.append(range(5), partition_of=lambda _: 0)
        await log.wait_for_watermark(below(4))
        held_back = log.watermarks()
        clock.advance(10.0)  # the quiet source read nothing for its idleness timeout
        await log.wait_for_watermark(below(99))
        quiet.append(range(200, 205), partition_of=lambda _: 0)  # active again
        await log.changes.wait_until(lambda: len(log.records()) == 110)
        busy.close()
        quiet.close()
        await job.wait()

    watermarks = log.watermarks()
    assert max(held_back) == below(4)
    assert watermarks[: len(held_back)] == held_back
    assert below(99) in watermarks
    assert watermarks[-1] == math.inf
    assert log.late_records() == []


async def test_failed_records_sent_to_a_side_output_never_cross_a_watermark_either() -> None:
    latency = random.Random(11)

    async def echo_or_fail(record: int) -> int:
        await anyio.sleep(latency.random() / 1000)
        if record // 20 % 5 == 0:  # whole batches fail: segments of side records only
            raise LookupError(record)
        return record

    env = StreamEnvironment(batch_size=20, auto_watermark_interval=0.0)
    results, failed = WatermarkLog(), WatermarkLog()
    failures = OutputTag[int]("failed")
    enriched = env.from_source(
        CollectionSource(range(2000)), uid="numbers", watermark_strategy=MONOTONOUS
    ).async_map(echo_or_fail, capacity=100, ordered=False, on_failure=failures, uid="echo")
    enriched.sink_to(results, uid="results")
    enriched.side_output(failures).sink_to(failed, uid="failed")

    await env.execute("fenced-side")

    assert sorted(failed.records()) == [x for x in range(2000) if x // 20 % 5 == 0]
    assert sorted(results.records()) == [x for x in range(2000) if x // 20 % 5]
    assert len(failed.watermarks()) > 50
    assert failed.late_records() == []
    assert results.late_records() == []


async def test_a_source_subtask_without_splits_is_idle_and_holds_no_watermark_back() -> None:
    topic = Topic(partitions=1)  # two source subtasks: one of them reads nothing
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0)
    log = WatermarkLog()
    env.from_source(
        TopicSource(topic), uid="topic", parallelism=2, watermark_strategy=MONOTONOUS
    ).sink_to(log, uid="log", parallelism=1)

    async with env.start("no-splits") as job:
        topic.append(range(100), partition_of=lambda _: 0)
        await log.wait_for_watermark(below(99))
        topic.close()
        await job.wait()

    assert log.watermarks()[-2:] == [below(99), math.inf]
