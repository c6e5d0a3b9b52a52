"""The Prometheus export: running jobs' metrics as Prometheus text, Flink's names, parsed
back by prometheus_client's own parser; a backpressured job shows where its time goes."""

from __future__ import annotations

from typing import Any

import anyio
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    Clock,
    JobClient,
    OutputTag,
    Sink,
    SinkContext,
    SinkWriter,
    StreamEnvironment,
)
from lockgate.engine.simulation import VirtualClock
from lockgate.engine.web.prometheus import CONTENT_TYPE, JobsCollector, prometheus_text
from tests.engine.jobs.basic import EndlessSource
from tests.engine.jobs.event_time import Partitions, PartitionsSource, WatermarkLog, below
from tests.engine.jobs.savepoints import Topic, TopicSource
from tests.engine.runtime.metrics.test_job_metrics import MONOTONOUS, windowed_job
from tests.engine.simulation.virtual import run_virtual


class PacedSink(Sink[Any]):
    """Writes ``per_second`` records per second of ``clock``: each record takes its time."""

    def __init__(self, clock: Clock, *, per_second: float) -> None:
        self.clock, self.per_second = clock, per_second

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _PacedWriter(self)


class _PacedWriter(SinkWriter[Any]):
    def __init__(self, sink: PacedSink) -> None:
        self.sink = sink

    async def write(self, records: list[Any]) -> None:
        await self.sink.clock.sleep(len(records) / self.sink.per_second)


def parsed(text: bytes) -> dict[str, list[Sample]]:
    return {f.name: f.samples for f in text_string_to_metric_families(text.decode())}


def value(families: dict[str, list[Sample]], sample: str, **labels: str) -> float:
    name = sample
    for suffix in ("_total", "_count", "_sum"):
        name = name.removesuffix(suffix)
    (found,) = [
        s.value for s in families[name] if s.name == sample and labels.items() <= s.labels.items()
    ]
    return found


def backpressured_text() -> bytes:
    """Ten virtual seconds of a source that never waits into a sink of 100 records/s."""

    async def run(clock: VirtualClock) -> bytes:
        env = StreamEnvironment(clock=clock, batch_size=10, channel_capacity=100)
        env.from_source(EndlessSource(), uid="events").sink_to(
            PacedSink(clock, per_second=100.0), uid="out"
        ).disable_chaining()
        async with env.start("paced") as job:
            await clock.sleep(10.0)
            text = prometheus_text([job])
            job.cancel()
        return text

    return run_virtual(run)


def test_a_backpressured_source_and_its_busy_sink_show_in_ms_per_second() -> None:
    families = parsed(backpressured_text())

    pressed = "lockgate_task_backPressuredTimeMsPerSecond"
    busy = "lockgate_task_busyTimeMsPerSecond"
    assert value(families, pressed, job="paced", operator="events", subtask="0") > 500.0
    assert value(families, busy, job="paced", operator="out", subtask="0") > 500.0
    assert value(families, busy, operator="events") < 100.0


def test_the_sink_of_100_records_a_second_takes_in_about_100_a_second() -> None:
    families = parsed(backpressured_text())

    rate = value(families, "lockgate_task_numRecordsInPerSecond", operator="out")
    assert 90.0 <= rate <= 110.0
    assert value(families, "lockgate_task_outPoolUsage", operator="events") > 0.5


async def async_job(name: str = "calls") -> JobClient:
    async def doubled(record: int) -> int:
        await anyio.lowlevel.checkpoint()
        return record * 2

    env = StreamEnvironment()
    env.enable_checkpointing(0.01)
    env.from_source(CollectionSource(range(500)), uid="numbers").async_map(
        doubled, capacity=4, uid="doubled"
    ).sink_to(CollectSink(), uid="out")
    async with env.start(name) as job:
        await job.wait()
    return job


async def test_every_family_is_a_lockgate_name_that_parses_back() -> None:
    families = list(text_string_to_metric_families(prometheus_text([await async_job()]).decode()))

    names = {family.name for family in families}
    assert all(
        name.startswith(("lockgate_task_", "lockgate_operator_", "lockgate_job_")) for name in names
    )
    assert {
        "lockgate_task_numRecordsIn",
        "lockgate_task_idleTimeMsPerSecond",
        "lockgate_operator_asyncLatencySeconds",
        "lockgate_job_numberOfCompletedCheckpoints",
        "lockgate_job_lastCheckpointDuration",
    } <= names


async def test_counters_are_prometheus_counters_with_a_total() -> None:
    families = parsed(prometheus_text([await async_job()]))

    assert value(families, "lockgate_task_numRecordsIn_total", operator="numbers") == 500.0
    assert value(families, "lockgate_operator_asyncCalls_total", operator="doubled") == 500.0


async def test_async_latency_is_a_histogram_of_the_whole_run() -> None:
    families = parsed(prometheus_text([await async_job()]))

    samples = families["lockgate_operator_asyncLatencySeconds"]
    buckets = [s for s in samples if s.name.endswith("_bucket")]
    counts = [s.value for s in buckets]
    assert counts == sorted(counts)  # cumulative
    assert buckets[-1].labels["le"] == "+Inf"
    assert counts[-1] == value(families, "lockgate_operator_asyncLatencySeconds_count") == 500.0


async def test_several_jobs_share_each_family_told_apart_by_their_job_label() -> None:
    first, second = await async_job("first"), await async_job("second")

    families = parsed(prometheus_text([first, second]))

    jobs = {s.labels["job"] for s in families["lockgate_job_numberOfCompletedCheckpoints"]}
    assert jobs == {"first", "second"}


async def test_the_collector_reads_its_jobs_anew_at_each_scrape() -> None:
    jobs: dict[str, JobClient] = {}
    collector = JobsCollector(jobs.values())
    before = list(collector.collect())

    jobs["calls"] = await async_job()

    assert before == []
    assert any(family.name == "lockgate_task_numRecordsIn" for family in collector.collect())


def test_the_content_type_is_that_of_the_text_prometheus_client_writes() -> None:
    assert CONTENT_TYPE == CONTENT_TYPE_LATEST
    assert CONTENT_TYPE.startswith("text/plain; version=")


async def test_late_records_and_side_outputs_are_counted_per_operator() -> None:
    async with windowed_job(late=OutputTag("late")).start("late") as job:
        await job.wait()

    families = parsed(prometheus_text([job]))

    side = "lockgate_operator_numSideOutputRecords_total"
    assert value(families, side, operator="w", subtask="0", tag="late") == 2.0
    assert value(families, "lockgate_operator_numLateRecordsDropped_total", operator="w") == 0.0


async def test_late_records_dropped_are_counted_per_window_operator() -> None:
    async with windowed_job(late=None).start("dropped") as job:
        await job.wait()

    families = parsed(prometheus_text([job]))

    assert value(families, "lockgate_operator_numLateRecordsDropped_total", operator="w") == 2.0


async def test_a_watermark_is_a_gauge_of_event_time_once_the_first_one_came() -> None:
    topic, log = Topic(partitions=1), WatermarkLog()
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0)
    env.from_source(TopicSource(topic), uid="topic", watermark_strategy=MONOTONOUS).sink_to(
        log, uid="log"
    ).disable_chaining()

    async with env.start("watermarks") as job:
        before = parsed(prometheus_text([job]))
        topic.append(range(10), partition_of=lambda _: 0)
        await log.wait_for_watermark(below(9))
        families = parsed(prometheus_text([job]))
        job.cancel()

    assert "lockgate_task_currentOutputWatermark" not in before
    assert value(families, "lockgate_task_currentOutputWatermark", operator="topic") == below(9)
    assert value(families, "lockgate_task_currentInputWatermark", operator="log") == below(9)


async def test_each_operator_of_a_chain_is_exported_with_its_records_in_and_out() -> None:
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(10)), uid="numbers").filter(
        lambda n: n < 4, uid="small"
    ).sink_to(CollectSink(), uid="out")
    async with env.start("operators") as job:
        await job.wait()
        families = parsed(prometheus_text([job]))

    assert value(families, "lockgate_operator_numRecordsIn_total", operator="small") == 10
    assert value(families, "lockgate_operator_numRecordsOut_total", operator="small") == 4
    assert value(families, "lockgate_operator_numRecordsIn_total", operator="out") == 4


async def test_a_subtask_s_bytes_are_exported_as_counters() -> None:
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(10)), uid="numbers").sink_to(CollectSink(), uid="out")
    async with env.start("bytes") as job:
        await job.wait()
        (subtask,) = job.metrics().subtasks
        families = parsed(prometheus_text([job]))

    assert value(families, "lockgate_task_numBytesIn_total", operator="numbers") == subtask.bytes_in
    assert subtask.bytes_in


async def test_each_split_watermark_is_a_gauge_labelled_by_its_split() -> None:
    partitions, log = Partitions(2), WatermarkLog()
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0)
    source = PartitionsSource(partitions)
    env.from_source(source, uid="parts", watermark_strategy=MONOTONOUS).sink_to(log, uid="log")

    async with env.start("splits") as job:
        partitions.append(0, [float(t) for t in range(100)])
        partitions.append(1, [float(t) for t in range(10)])
        await log.changes.wait_until(lambda: len(log.records()) == 110)
        families = parsed(prometheus_text([job]))
        job.cancel()

    split = "lockgate_operator_currentSplitWatermark"
    assert value(families, split, operator="parts", subtask="0", split="p0") == below(99)
    assert value(families, split, operator="parts", subtask="0", split="p1") == below(9)
