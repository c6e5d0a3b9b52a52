"""KafkaSink against a real Kafka-protocol broker (Tansu): acknowledged at each checkpoint,
every record delivered at least once across a failure."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from lockgate.connectors import CollectionSource
from lockgate.connectors.errors import ConnectorError, UnencodableRecord
from lockgate.connectors.kafka import KafkaRecord, KafkaSink, KafkaWriterStatistics
from lockgate.engine import RestartStrategy, SinkContext, StreamEnvironment, SystemClock
from lockgate.engine.testing import AwaitCheckpoint, FailOnce

pytestmark = pytest.mark.asyncio_only(reason="aiokafka runs on asyncio only")


@pytest.fixture
async def topic(request: pytest.FixtureRequest, kafka_bootstrap: str) -> str:
    name = f"{re.sub(r'[^a-zA-Z0-9._-]', '-', request.node.name)}-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, 2, replication_factor=1)])
    finally:
        await admin.close()
    return name


async def read_topic(bootstrap: str, topic: str, count: int) -> list[Any]:
    """Read the topic's partitions from their start until ``count`` records came."""
    return await read_until(bootstrap, topic, lambda records: len(records) >= count)


async def read_values(bootstrap: str, topic: str, expected: set[int]) -> set[int]:
    """Read the topic's values as ints until every expected value came; return all read."""

    def complete(records: list[Any]) -> bool:
        return {int(record.value) for record in records} >= expected

    return {int(record.value) for record in await read_until(bootstrap, topic, complete)}


async def read_until(bootstrap: str, topic: str, done: Callable[[list[Any]], bool]) -> list[Any]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        partitions = [TopicPartition(topic, p) for p in range(2)]
        consumer.assign(partitions)
        for partition in partitions:
            consumer.seek(partition, 0)
        records: list[Any] = []
        with anyio.fail_after(10):
            while not done(records):
                for batch in (await consumer.getmany(timeout_ms=100)).values():
                    records += batch
        return records
    finally:
        await consumer.stop()


def context(index: int = 0) -> SinkContext:
    return SinkContext("out", index, 1, SystemClock())


async def test_a_snapshot_returns_once_the_broker_acknowledged_every_record(
    kafka_bootstrap: str, topic: str
) -> None:
    writer = KafkaSink[int](kafka_bootstrap, topic).create_writer(context())
    await writer.open()
    await writer.write(list(range(100)))

    state = await writer.snapshot_state(1)
    statistics = writer.statistics()
    await writer.close()

    assert state == []
    assert statistics == KafkaWriterStatistics(sent=100, acknowledged=100)
    records = await read_topic(kafka_bootstrap, topic, 100)
    assert sorted(int(record.value) for record in records) == list(range(100))


async def test_finish_returns_once_the_broker_acknowledged_every_record(
    kafka_bootstrap: str, topic: str
) -> None:
    writer = KafkaSink[str](kafka_bootstrap, topic).create_writer(context())
    await writer.open()
    await writer.write(["a", "b", "c"])

    await writer.finish()
    await writer.close()

    assert writer.statistics() == KafkaWriterStatistics(sent=3, acknowledged=3)


async def test_key_and_encode_functions_turn_records_into_keys_and_values(
    kafka_bootstrap: str, topic: str
) -> None:
    sink = KafkaSink[tuple[str, int]](
        kafka_bootstrap, topic, key=lambda pair: pair[0], encode=lambda pair: str(pair[1])
    )
    writer = sink.create_writer(context())
    await writer.open()
    await writer.write([("a", 1), ("b", 2), ("a", 3)])
    await writer.finish()
    await writer.close()

    records = await read_topic(kafka_bootstrap, topic, 3)

    by_key = sorted((record.key, record.value) for record in records)
    assert by_key == [(b"a", b"1"), (b"a", b"3"), (b"b", b"2")]
    assert len({record.partition for record in records if record.key == b"a"}) == 1


async def test_records_are_encoded_as_bytes_text_json_or_the_value_of_a_kafka_record(
    kafka_bootstrap: str, topic: str
) -> None:
    copied = KafkaRecord("in", 0, 41, b"key", b"copied", 0)
    writer = KafkaSink[Any](kafka_bootstrap, topic).create_writer(context())
    await writer.open()
    await writer.write([b"raw", "text", {"n": 1}, copied])
    await writer.finish()
    await writer.close()

    records = await read_topic(kafka_bootstrap, topic, 4)

    assert sorted((r.key, r.value) for r in records if r.key) == [(b"key", b"copied")]
    assert sorted(r.value for r in records if not r.key) == [b"raw", b"text", b'{"n":1}']


@pytest.mark.parametrize("record", [object(), {"n": {1, 2}}])
async def test_a_record_that_cannot_be_encoded_is_refused_naming_the_sink(
    kafka_bootstrap: str, topic: str, record: Any
) -> None:
    writer = KafkaSink[Any](kafka_bootstrap, topic).create_writer(context())
    await writer.open()

    with pytest.raises(UnencodableRecord, match=r"Kafka sink 'out' \(subtask 1/1\)"):
        await writer.write([record])
    await writer.close()


async def test_a_key_that_is_not_bytes_or_text_is_refused(kafka_bootstrap: str, topic: str) -> None:
    writer = KafkaSink[Any](kafka_bootstrap, topic, key=lambda n: n).create_writer(context())
    await writer.open()

    with pytest.raises(UnencodableRecord, match="pass key= and encode="):
        await writer.write([1])
    await writer.close()


async def test_a_broker_that_cannot_be_reached_fails_the_writer_when_it_opens() -> None:
    writer = KafkaSink[int]("127.0.0.1:1", "numbers").create_writer(context())

    with pytest.raises(ConnectorError, match=r"cannot reach the Kafka broker at 127\.0\.0\.1:1"):
        await writer.open()
    await writer.close()


def test_a_topic_name_is_required() -> None:
    with pytest.raises(ValueError, match="topic must be a topic name"):
        KafkaSink("127.0.0.1:1", "")


async def test_a_job_delivers_every_record_at_least_once_across_a_failure(
    kafka_bootstrap: str, topic: str
) -> None:
    fail = FailOnce()
    env = StreamEnvironment(parallelism=2, batch_size=16)
    env.enable_checkpointing(0.02)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    # the first split waits for a completed checkpoint at 100 and fails 50 records later
    numbers = [*range(100), AwaitCheckpoint(), *range(100, 150), fail, *range(150, 500)]
    sink = KafkaSink[int](kafka_bootstrap, topic)
    env.from_source(CollectionSource(numbers), uid="numbers").sink_to(sink, uid="out")

    with anyio.fail_after(20):
        await env.execute("numbers-to-kafka")

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert await read_values(kafka_bootstrap, topic, set(range(500))) == set(range(500))
