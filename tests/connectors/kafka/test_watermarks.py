"""KafkaSource with a watermark strategy: each partition a split with its own watermark."""

from __future__ import annotations

import math

import pytest

from lockgate.connectors.kafka import KafkaRecord, KafkaSource
from lockgate.engine import StreamEnvironment, WatermarkStrategy
from lockgate.engine.time.clock import ManualClock
from tests.connectors.kafka.test_source import create_topic, produce, topic  # noqa: F401
from tests.engine.jobs.event_time import WatermarkLog, below

pytestmark = pytest.mark.asyncio_only(reason="aiokafka runs on asyncio only")

BY_VALUE = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
    lambda record: float(record.value)
)


def by_value(record: KafkaRecord) -> float:
    return float(record.value or b"")


def kafka_job(
    source: KafkaSource[KafkaRecord], strategy: WatermarkStrategy, clock: ManualClock | None = None
) -> tuple[StreamEnvironment, WatermarkLog]:
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0, clock=clock)
    log = WatermarkLog()
    env.from_source(source, uid="topic", watermark_strategy=strategy).map(by_value).sink_to(
        log, uid="log"
    )
    return env, log


async def test_the_watermark_is_the_minimum_over_the_partitions(
    kafka_bootstrap: str,
    topic: str,  # noqa: F811
) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=2)
    await produce(kafka_bootstrap, topic, range(0, 200, 2), partitions=2)  # p0: 0, 2, ..., 198
    await produce(kafka_bootstrap, topic, range(1, 21, 2), partitions=2)  # p1: 1, 3, ..., 19
    env, log = kafka_job(KafkaSource(kafka_bootstrap, [topic]), BY_VALUE)

    async with env.start("minimum") as job:
        await log.changes.wait_until(lambda: len(log.records()) == 110)
        await log.wait_for_watermark(below(19))
        job.cancel()

    assert max(log.watermarks()) == below(19)


async def test_an_idle_partition_does_not_hold_back_the_watermark_of_the_others(
    kafka_bootstrap: str,
    topic: str,  # noqa: F811
) -> None:
    clock = ManualClock()
    await create_topic(kafka_bootstrap, topic, partitions=2)
    await produce(kafka_bootstrap, topic, range(0, 200, 2), partitions=2)  # p0 only
    env, log = kafka_job(KafkaSource(kafka_bootstrap, [topic]), BY_VALUE.with_idleness(10.0), clock)

    async with env.start("idle-partition") as job:
        await log.changes.wait_until(lambda: len(log.records()) == 100)
        clock.advance(5.0)
        await produce(kafka_bootstrap, topic, range(200, 220, 2), partitions=2)  # p0 reads on
        await log.changes.wait_until(lambda: len(log.records()) == 110)
        held_back = log.watermarks()
        clock.advance(5.0)  # p1 read nothing for its idleness timeout; p0 did
        await log.wait_for_watermark(below(218))
        job.cancel()

    assert held_back == []  # p1 held the watermark back until it was idle
    assert max(log.watermarks()) == below(218)


async def test_a_partition_at_its_end_stops_holding_back_the_watermark(
    kafka_bootstrap: str,
    topic: str,  # noqa: F811
) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=2)
    await produce(kafka_bootstrap, topic, range(0, 200, 2), partitions=2)  # p1 stays empty
    env, log = kafka_job(KafkaSource(kafka_bootstrap, [topic], stop_at_end=True), BY_VALUE)

    await env.execute("bounded")

    finite = log.watermarks()[:-1]
    assert finite == sorted(finite)
    assert max(finite) > 150.0  # p0's, batch by batch: the empty p1 ended at once
    assert log.watermarks()[-1] == math.inf
