"""Timers of keyed process functions in running jobs: event time, processing time, recovery."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    JobStatus,
    KeyedProcessFunction,
    OperatorError,
    OutputTag,
    ProcessContext,
    RestartStrategy,
    RuntimeContext,
    StreamEnvironment,
    TimeDomain,
    ValueStateDescriptor,
    Watermark,
    WatermarkStrategy,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from lockgate.engine.time.clock import ManualClock
from tests.engine.jobs.event_time import WatermarkLog
from tests.engine.jobs.savepoints import Topic, TopicSource

Event = tuple[int, float]  # (key, event time)
BY_TIME = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
    lambda event: event[1]
)
COUNT = ValueStateDescriptor[int]("count")


class CountUntilTimer(KeyedProcessFunction[int, Event, tuple[Any, ...]]):
    """Counts a key's events; its first event sets an event-time timer ``delay`` later,
    which emits ``("fired", key, timer time, count, domain)``; ``fail`` fires at time 600."""

    def __init__(self, delay: float, fail: FailOnce | None = None) -> None:
        self.delay = delay
        self.fail = fail

    def open(self, context: RuntimeContext) -> None:
        self.count = context.get_state(COUNT)

    def process_element(self, value: Event, ctx: ProcessContext[int]) -> None:
        count = self.count.value() or 0
        if count == 0:
            ctx.timer_service().register_event_time_timer(value[1] + self.delay)
        self.count.update(count + 1)
        if self.fail is not None and value[1] >= 600:
            self.fail.maybe_fire()

    def on_timer(self, timestamp: float, ctx: ProcessContext[int]) -> list[tuple[Any, ...]]:
        key, count = ctx.get_current_key(), self.count.value()
        return [("fired", key, timestamp, count, ctx.time_domain)]


def events(count: int, keys: int = 5) -> list[Event]:
    return [(n % keys, float(n)) for n in range(count)]


async def test_event_time_timers_fire_at_the_end_of_input_with_every_count() -> None:
    env = StreamEnvironment(parallelism=2, batch_size=16)
    sink = CollectSink()
    (
        env.from_source(CollectionSource(events(1000)), uid="events", watermark_strategy=BY_TIME)
        .key_by(lambda event: event[0])
        .process(CountUntilTimer(delay=10_000.0), uid="counts")
        .sink_to(sink, uid="out")
    )

    await env.execute("timers-at-the-end")

    assert sorted(sink.results) == [
        ("fired", key, key + 10_000.0, 200, TimeDomain.EVENT_TIME) for key in range(5)
    ]


async def test_an_event_time_timer_fires_before_the_watermark_that_reaches_it_moves_on() -> None:
    env = StreamEnvironment(batch_size=16, auto_watermark_interval=0.0)
    log = WatermarkLog()
    (
        env.from_source(CollectionSource(events(1000)), uid="events", watermark_strategy=BY_TIME)
        .key_by(lambda event: event[0])
        .process(CountUntilTimer(delay=50.0), uid="counts")
        .sink_to(log, uid="out")
    )

    await env.execute("timers-mid-stream")

    fired = log.records()
    assert sorted((key, time) for _, key, time, _, _ in fired) == [(k, k + 50.0) for k in range(5)]
    assert log.late_records(event_time=lambda record: record[2]) == []
    assert all(11 <= count < 200 for _, _, _, count, _ in fired)  # fired mid-stream
    entries = log.logs[0]
    last_fired = max(entries.index(record) for record in fired)
    later = entries[last_fired:]
    assert any(isinstance(e, Watermark) and e.timestamp < math.inf for e in later)


class Reminder(KeyedProcessFunction[int, int, tuple[Any, ...]]):
    """Sets a processing-time timer 5 s after a key's first record; deletes an earlier one."""

    def open(self, context: RuntimeContext) -> None:
        self.seen = context.get_state(COUNT)

    def process_element(self, value: int, ctx: ProcessContext[int]) -> None:
        if self.seen.value() is None:
            timers = ctx.timer_service()
            now = timers.current_processing_time()
            timers.register_processing_time_timer(now + 1.0)
            timers.delete_processing_time_timer(now + 1.0)  # changed its mind
            timers.register_processing_time_timer(now + 5.0)
        self.seen.update(1)

    def on_timer(self, timestamp: float, ctx: ProcessContext[int]) -> list[tuple[Any, ...]]:
        ctx.output(REMINDED, ctx.get_current_key())
        return [("fired", ctx.get_current_key(), timestamp, ctx.time_domain)]


REMINDED = OutputTag[int]("reminded")


async def test_processing_time_timers_fire_on_the_jobs_clock() -> None:
    clock, topic = ManualClock(), Topic(partitions=1)
    env = StreamEnvironment(clock=clock)
    log, reminded = WatermarkLog(), CollectSink[int]()
    reminders = (
        env.from_source(TopicSource(topic), uid="numbers")
        .map(topic.passed)
        .key_by(lambda n: n % 3)
        .process(Reminder(), uid="reminders")
    )
    reminders.sink_to(log, uid="out")
    reminders.side_output(REMINDED).sink_to(reminded, uid="reminded")

    async with env.start("reminders") as job:
        topic.append(range(9), partition_of=lambda _: 0)
        await topic.all_read.wait()
        clock.advance(1.0)  # the deleted timers would fire now
        clock.advance(3.9)
        assert log.records() == []
        clock.advance(0.1)
        await log.changes.wait_until(lambda: len(log.records()) == 3)
        topic.close()
        await job.wait()

    expected = [("fired", key, 5.0, TimeDomain.PROCESSING_TIME) for key in range(3)]
    assert sorted(log.records()) == expected
    assert sorted(reminded.results) == [0, 1, 2]


@pytest.mark.parametrize(
    ("backend", "incremental"), [("memory", False), ("rocksdb", False), ("rocksdb", True)]
)
async def test_timers_survive_a_failure_and_fire_once_after_recovery(
    backend: str, incremental: bool
) -> None:
    fail = FailOnce()
    env = StreamEnvironment(parallelism=2, batch_size=16)
    env.set_state_backend(backend, incremental=incremental)
    env.enable_checkpointing(0.02)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    sink = CollectSink()
    timed = [*events(300), AwaitCheckpoint(), *events(1000)[300:]]
    (
        env.from_source(  # one split: the failure comes after the checkpoint at 300
            CollectionSource(timed), uid="events", parallelism=1, watermark_strategy=BY_TIME
        )
        .key_by(lambda event: event[0])
        .process(CountUntilTimer(delay=10_000.0, fail=fail), uid="counts")
        .sink_to(sink, uid="out")
    )

    result = await env.execute("timers-recovered")

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    restored_from = {stats.restore for stats in result.metrics.keyed_state("counts")}
    assert restored_from == ({"files"} if incremental else {"key_groups"})
    # every key's timer was set before the checkpoint, so only the restored timers can fire
    assert sorted(sink.results) == [
        ("fired", key, key + 10_000.0, 200, TimeDomain.EVENT_TIME) for key in range(5)
    ]


def counting_job(topic: Topic, sink: CollectSink[Any], parallelism: int) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=parallelism, max_parallelism=16, batch_size=16)
    env.enable_checkpointing()
    (
        env.from_source(TopicSource(topic), uid="events", parallelism=1)
        .map(topic.passed, parallelism=1)  # in order, in the source's subtask
        .assign_timestamps_and_watermarks(BY_TIME, parallelism=1)
        .key_by(lambda event: event[0])
        .process(CountUntilTimer(delay=10_000.0), uid="counts")
        .sink_to(sink, uid="out")
    )
    return env


async def test_timers_move_with_their_keys_when_a_savepoint_restores_at_another_parallelism(
    tmp_path: Path,
) -> None:
    topic, first, second = Topic(partitions=1), CollectSink(), CollectSink()
    topic.append(events(500), partition_of=lambda _: 0)
    async with counting_job(topic, first, parallelism=2).start("before") as job:
        await topic.all_read.wait()
        savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    topic.append(events(1000)[500:], partition_of=lambda _: 0)
    topic.close()

    await counting_job(topic, second, parallelism=3).execute("after", restore_from=savepoint)

    assert first.results == []  # stopped without draining: event time never reached the timers
    assert sorted(second.results) == [
        ("fired", key, key + 10_000.0, 200, TimeDomain.EVENT_TIME) for key in range(5)
    ]


class LateReminder(KeyedProcessFunction[int, int, str]):
    """Sets a processing-time timer an hour ahead for every record."""

    def process_element(self, value: int, ctx: ProcessContext[int]) -> None:
        timers = ctx.timer_service()
        timers.register_processing_time_timer(timers.current_processing_time() + 3600.0)

    def on_timer(self, timestamp: float, ctx: ProcessContext[int]) -> list[str]:
        return ["fired"]


async def test_processing_time_timers_pending_at_the_end_of_input_do_not_fire() -> None:
    env = StreamEnvironment()
    sink = CollectSink[str]()
    (
        env.from_source(CollectionSource(range(10)), uid="numbers")
        .key_by(lambda n: n % 2)
        .process(LateReminder(), uid="reminders")
        .sink_to(sink, uid="out")
    )

    with anyio.fail_after(10):  # the job does not wait an hour for its timers
        result = await env.execute("pending")

    assert result.status is JobStatus.FINISHED
    assert sink.results == []


class RemindAfter(KeyedProcessFunction[int, tuple[int, float, float], tuple[int, float]]):
    """Sets an event-time timer ``delay`` after each ``(key, event time, delay)``."""

    def process_element(self, value: tuple[int, float, float], ctx: ProcessContext[int]) -> None:
        ctx.timer_service().register_event_time_timer(value[1] + value[2])

    def on_timer(self, timestamp: float, ctx: ProcessContext[int]) -> list[tuple[int, float]]:
        return [(ctx.get_current_key(), timestamp)]


async def test_a_timer_at_nan_fails_the_job_naming_the_function_that_set_it() -> None:
    env = StreamEnvironment(parallelism=1)
    events = [(0, 1.0, 5.0), (1, 2.0, math.nan), (0, 3.0, 5.0)]
    (
        env.from_source(CollectionSource(events), uid="events", watermark_strategy=BY_TIME)
        .key_by(lambda event: event[0])
        .process(RemindAfter(), uid="reminders")
        .sink_to(CollectSink(), uid="out")
    )

    with pytest.raises(OperatorError) as failure:
        await env.execute("nan-timer")

    assert failure.value.uid == "reminders"
    assert "timer for key 1 at NaN" in str(failure.value.__cause__)
