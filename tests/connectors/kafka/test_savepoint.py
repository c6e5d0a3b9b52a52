"""A Kafka topic to a Kafka topic and a CollectSink across a stop with a savepoint, a restore
from it, and a second stop: the output topic holds every input record once, and so does the
CollectSink, whose transactions carry the ``KafkaRecord`` values through the savepoint.
KafkaSink is at-least-once across failures, but a stop leaves nothing after its savepoint, so
a restore duplicates none."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import anyio
import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from lockgate.connectors import CollectSink
from lockgate.connectors.kafka import KafkaRecord, KafkaSink, KafkaSource
from lockgate.engine import StreamEnvironment
from tests.connectors.savepoint_jobs import Progress

pytestmark = pytest.mark.asyncio_only(reason="aiokafka runs on asyncio only")

PARTITIONS = 3
FIRST, MORE = 300, 200


@pytest.fixture
async def topics(request: pytest.FixtureRequest, kafka_bootstrap: str) -> tuple[str, str]:
    """A new input and output topic."""
    name = f"{re.sub(r'[^a-zA-Z0-9._-]', '-', request.node.name)}-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [NewTopic(f"{name}-{end}", PARTITIONS, replication_factor=1) for end in ("in", "out")]
        )
    finally:
        await admin.close()
    return f"{name}-in", f"{name}-out"


async def produce(bootstrap: str, topic: str, values: range) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False)
    await producer.start()
    try:
        for value in values:
            await producer.send(topic, str(value).encode(), partition=value % PARTITIONS)
        await producer.flush()
    finally:
        await producer.stop()


def topics_job(
    bootstrap: str, topics: tuple[str, str], progress: Progress, kept: CollectSink[KafkaRecord]
) -> StreamEnvironment:
    source, target = topics
    env = StreamEnvironment(parallelism=2, batch_size=50)
    env.enable_checkpointing(None)
    records = env.from_source(KafkaSource(bootstrap, [source]), uid="records")
    passed = records.map(progress, uid="progress")
    passed.sink_to(KafkaSink(bootstrap, target), uid="out")
    passed.sink_to(kept, uid="kept")
    return env


def values(records: list[KafkaRecord]) -> list[int]:
    return sorted(int(record.value or b"") for record in records)


async def produced(bootstrap: str, topic: str) -> list[int]:
    """The values of every record of ``topic``, read by a bounded job."""
    sink = CollectSink[KafkaRecord]()
    env = StreamEnvironment(parallelism=2)
    env.from_source(KafkaSource(bootstrap, [topic], stop_at_end=True)).sink_to(sink)
    await env.execute("read-back")
    return values(sink.results)


async def test_a_kafka_job_stopped_with_a_savepoint_and_restored_produces_every_record_once(
    kafka_bootstrap: str, topics: tuple[str, str], tmp_path: Path
) -> None:
    progress, kept = Progress(), CollectSink[KafkaRecord]()
    await produce(kafka_bootstrap, topics[0], range(FIRST))
    with anyio.fail_after(30):
        async with topics_job(kafka_bootstrap, topics, progress, kept).start("topics") as job:
            await progress.wait_passed(FIRST)
            savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
        first = await produced(kafka_bootstrap, topics[1])

    await produce(kafka_bootstrap, topics[0], range(FIRST, FIRST + MORE))
    restored = topics_job(kafka_bootstrap, topics, progress, kept)
    with anyio.fail_after(30):
        async with restored.start("topics", restore_from=savepoint) as job:
            await progress.wait_passed(FIRST + MORE)
            await job.stop_with_savepoint(tmp_path.as_uri())
        final = await produced(kafka_bootstrap, topics[1])

    assert first == list(range(FIRST))
    assert final == list(range(FIRST + MORE))
    assert values(kept.results) == list(range(FIRST + MORE))
