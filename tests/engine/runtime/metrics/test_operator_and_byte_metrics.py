"""job.metrics() per operator of a chain (records in and out, whichever way an operator
emits) and per subtask in bytes (the pickled size of the records it took in and sent on)."""

from __future__ import annotations

import pickle
import threading

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import JobMetrics, ManualClock, StreamEnvironment, TumblingEventTimeWindows
from lockgate.engine.runtime.subtask.pipeline import FAN_OUT_CHUNK
from tests.engine.functions.test_process_timers import Reminder
from tests.engine.jobs.basic import CallbackSink
from tests.engine.jobs.event_time import WatermarkLog
from tests.engine.jobs.savepoints import Topic, TopicSource
from tests.engine.runtime.metrics.test_job_metrics import MONOTONOUS


def counted(metrics: JobMetrics, uid: str) -> tuple[int, int]:
    (operator,) = metrics.operator(uid)
    return operator.records_in, operator.records_out


async def test_each_operator_of_a_chain_counts_the_records_it_took_in_and_sent_on() -> None:
    env = StreamEnvironment()
    (
        env.from_source(CollectionSource(range(100)), uid="numbers")
        .map(lambda n: n, uid="parse")
        .filter(lambda n: n % 2 == 0, uid="evens")
        .flat_map(lambda n: [n, n], uid="twice")
        .sink_to(CollectSink(), uid="out")
    )

    metrics = (await env.execute("chained")).metrics

    (subtask,) = metrics.subtasks
    assert [o.uid for o in subtask.operators] == ["numbers", "parse", "evens", "twice", "out"]
    assert [(o.records_in, o.records_out) for o in subtask.operators] == [
        (100, 100),
        (100, 100),
        (100, 50),
        (50, 100),
        (100, 100),
    ]


async def test_a_window_sends_on_what_its_firings_emit() -> None:
    env = StreamEnvironment()
    (
        env.from_source(CollectionSource(range(10)), uid="times", watermark_strategy=MONOTONOUS)
        .key_by(lambda _: 0)
        .window(TumblingEventTimeWindows.of(5.0))
        .reduce(lambda a, b: a + b, uid="sums")
        .sink_to(CollectSink(), uid="out")
    )

    metrics = (await env.execute("windows")).metrics

    assert counted(metrics, "sums") == (10, 2)


async def test_a_process_function_sends_on_what_its_processing_time_timers_emit() -> None:
    clock, topic, log = ManualClock(), Topic(partitions=1), WatermarkLog()
    env = StreamEnvironment(clock=clock)
    env.from_source(TopicSource(topic), uid="numbers").map(topic.passed).key_by(
        lambda n: n % 3
    ).process(Reminder(), uid="reminders").sink_to(log, uid="out")

    async with env.start("reminders") as job:
        topic.append(range(9), partition_of=lambda _: 0)
        await topic.all_read.wait()
        clock.advance(5.0)  # each key's timer fires and emits one record
        await log.changes.wait_until(lambda: len(log.records()) == 3)
        topic.close()
        await job.wait()

    assert counted(job.metrics(), "reminders") == (9, 3)


async def test_an_async_map_sends_on_its_results_as_they_are_taken() -> None:
    async def doubled(value: int) -> int:
        await anyio.lowlevel.checkpoint()
        return value * 2

    env = StreamEnvironment()
    env.from_source(CollectionSource(range(50)), uid="numbers").async_map(
        doubled, capacity=4, uid="doubled"
    ).sink_to(CollectSink(), uid="out")

    metrics = (await env.execute("async")).metrics

    assert counted(metrics, "doubled") == (50, 50)


async def test_a_flat_map_that_fans_out_in_chunks_counts_every_chunk() -> None:
    fan_out = 2 * FAN_OUT_CHUNK + 1
    env = StreamEnvironment()
    env.from_source(CollectionSource([0]), uid="one").flat_map(
        lambda _: range(fan_out), uid="many"
    ).sink_to(CollectSink(), uid="out")

    metrics = (await env.execute("fan-out")).metrics

    assert counted(metrics, "many") == (1, fan_out)
    assert counted(metrics, "out") == (fan_out, fan_out)


async def test_operator_rates_are_per_second_over_the_rolling_window() -> None:
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(1_000)), uid="numbers").map(
        lambda n: n, uid="parse"
    ).sink_to(CollectSink(), uid="out")

    metrics = (await env.execute("rates")).metrics

    (parse,) = metrics.operator("parse")
    (subtask,) = metrics.subtasks
    assert parse.records_in_per_second == pytest.approx(subtask.records_in_per_second)
    assert parse.records_in_per_second > 0


def two_chains(records: list[int], *, batch_size: int) -> StreamEnvironment:
    env = StreamEnvironment(batch_size=batch_size)
    env.from_source(CollectionSource(records), uid="numbers").sink_to(
        CollectSink(), uid="out"
    ).disable_chaining()
    return env


async def test_bytes_in_and_out_are_the_pickled_size_of_the_records() -> None:
    batch = [n % 200 for n in range(100)]  # each batch pickles to the same size
    env = two_chains(batch * 10, batch_size=100)

    metrics = (await env.execute("bytes")).metrics

    (source,) = metrics.of("numbers")
    (sink,) = metrics.of("out")
    size = 10 * len(pickle.dumps(batch, protocol=5))
    assert (source.bytes_in, source.bytes_out) == (size, size)
    assert sink.bytes_in == pytest.approx(size, rel=0.05)
    assert sink.bytes_out == sink.bytes_in
    assert source.bytes_out_per_second is not None
    assert source.bytes_out_per_second > 0


async def test_records_pickle_refuses_have_no_size_in_bytes() -> None:
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(3)), uid="numbers").map(
        lambda _: threading.Lock(), uid="locks"
    ).sink_to(CallbackSink(lambda _, records: None), uid="out")

    metrics = (await env.execute("locks")).metrics

    (subtask,) = metrics.subtasks
    assert subtask.bytes_in == len(pickle.dumps([0, 1, 2], protocol=5))
    assert (subtask.bytes_out, subtask.bytes_out_per_second) == (None, None)
