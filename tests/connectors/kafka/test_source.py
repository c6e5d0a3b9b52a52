"""KafkaSource against a real Kafka-protocol broker (Tansu): splits, offsets, waiting, ending."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from collections.abc import Iterable
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from lockgate.connectors import CollectSink
from lockgate.connectors.errors import ConnectorError, InputNotFound, InvalidSplit
from lockgate.connectors.kafka import KafkaRecord, KafkaSource
from lockgate.engine import (
    JobStatus,
    SourceContext,
    SourceReader,
    SourceSplit,
    StreamEnvironment,
    SystemClock,
)
from lockgate.engine.io.sources import assign_splits
from lockgate.engine.testing import LoopLagMonitor
from tests.engine.jobs.million_keys import STALL

pytestmark = pytest.mark.asyncio_only(reason="aiokafka runs on asyncio only")


@pytest.fixture
def topic(request: pytest.FixtureRequest) -> str:
    return f"{re.sub(r'[^a-zA-Z0-9._-]', '-', request.node.name)}-{uuid.uuid4().hex[:8]}"


async def create_topic(bootstrap: str, name: str, partitions: int) -> str:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, replication_factor=1)])
    finally:
        await admin.close()
    return name


async def produce(
    bootstrap: str, topic: str, values: Iterable[int], partitions: int = 1
) -> list[tuple[str, int, int]]:
    """Send each value as text to partition ``value % partitions``; return (topic, p, offset)."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False)
    await producer.start()
    try:
        sent = [
            await producer.send(topic, str(v).encode(), key=b"k", partition=v % partitions)
            for v in values
        ]
        await producer.flush()
    finally:
        await producer.stop()
    return [(topic, (m := await s).partition, m.offset) for s in sent]


def context(index: int = 0, parallelism: int = 1) -> SourceContext:
    return SourceContext("records", index, parallelism, SystemClock())


async def read_out(reader: SourceReader[Any], max_records: int = 7) -> list[Any]:
    records: list[Any] = []
    while batch := await reader.read(max_records):
        records += batch
    return records


async def read_splits(source: KafkaSource[Any], splits: list[SourceSplit]) -> list[Any]:
    reader = source.create_reader(splits, context())
    await reader.open()
    try:
        with anyio.fail_after(10):
            return await read_out(reader)
    finally:
        await reader.close()


async def splits_of(source: KafkaSource[Any], parallelism: int) -> list[SourceSplit]:
    """The splits a job makes: the partitions found on the loop, then ``create_splits``."""
    await source.discover_splits()
    return source.create_splits(parallelism)


def ids(records: list[KafkaRecord]) -> list[tuple[str, int, int]]:
    return [(record.topic, record.partition, record.offset) for record in records]


def values(records: list[KafkaRecord]) -> list[int]:
    return [int(record.value or b"") for record in records]


@pytest.mark.parametrize("parallelism", [1, 2, 3])
async def test_partitions_over_fewer_or_more_subtasks_cover_every_record_once(
    kafka_bootstrap: str, topic: str, parallelism: int
) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=2)
    expected = await produce(kafka_bootstrap, topic, range(60), partitions=2)
    source = KafkaSource(kafka_bootstrap, [topic], stop_at_end=True)
    splits = await splits_of(source, parallelism)

    read = []
    for index in range(parallelism):
        read += ids(await read_splits(source, assign_splits(splits, index, parallelism)))

    assert sorted(read) == sorted(expected)
    assert len(read) == len(expected)


async def test_the_partitions_of_several_topics_are_spread_over_the_subtasks(
    kafka_bootstrap: str, topic: str
) -> None:
    small = await create_topic(kafka_bootstrap, f"{topic}-a", partitions=2)
    large = await create_topic(kafka_bootstrap, f"{topic}-b", partitions=3)
    expected = await produce(kafka_bootstrap, small, range(20), partitions=2)
    expected += await produce(kafka_bootstrap, large, range(30), partitions=3)
    source = KafkaSource(kafka_bootstrap, [small, large], stop_at_end=True)
    splits = await splits_of(source, 2)

    first, second = (assign_splits(splits, index, 2) for index in range(2))
    read = ids(await read_splits(source, first)) + ids(await read_splits(source, second))

    assert [len(first), len(second)] == [3, 2]
    assert sorted(read) == sorted(expected)


async def test_a_reader_of_several_partitions_keeps_each_partitions_order(
    kafka_bootstrap: str, topic: str
) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=3)
    await produce(kafka_bootstrap, topic, range(90), partitions=3)
    source = KafkaSource(kafka_bootstrap, [topic], stop_at_end=True)

    records = await read_splits(source, await splits_of(source, 1))

    for partition in range(3):
        assert values([r for r in records if r.partition == partition]) == list(
            range(partition, 90, 3)
        )


async def test_a_reader_resumes_exactly_after_its_snapshot(
    kafka_bootstrap: str, topic: str
) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=2)
    expected = await produce(kafka_bootstrap, topic, range(60), partitions=2)
    source = KafkaSource(kafka_bootstrap, [topic], stop_at_end=True)
    first = source.create_reader(await splits_of(source, 1), context())
    await first.open()
    before = await first.read(10) + await first.read(10)
    snapshot = first.snapshot_splits()
    await first.close()

    after = await read_splits(source, snapshot)

    assert sorted(ids(before + after)) == sorted(expected)
    assert len(before + after) == len(expected)


async def test_records_are_kafka_records_with_raw_keys_and_values(
    kafka_bootstrap: str, topic: str
) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=1)
    await produce(kafka_bootstrap, topic, [7])
    source = KafkaSource(kafka_bootstrap, [topic], stop_at_end=True)

    [record] = await read_splits(source, await splits_of(source, 1))

    assert record[:5] == (topic, 0, 0, b"k", b"7")
    assert record.headers == ()


async def test_a_decode_function_shapes_each_record(kafka_bootstrap: str, topic: str) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=1)
    await produce(kafka_bootstrap, topic, range(5))
    source = KafkaSource(
        kafka_bootstrap, [topic], decode=lambda record: int(record.value or b""), stop_at_end=True
    )

    assert await read_splits(source, await splits_of(source, 1)) == [0, 1, 2, 3, 4]


async def test_a_bounded_source_stops_at_the_end_when_it_opened(
    kafka_bootstrap: str, topic: str
) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=1)
    await produce(kafka_bootstrap, topic, range(5))
    source = KafkaSource(kafka_bootstrap, [topic], stop_at_end=True)
    reader = source.create_reader(await splits_of(source, 1), context())
    await reader.open()

    await produce(kafka_bootstrap, topic, range(5, 10))
    records = await read_out(reader)
    await reader.close()

    assert values(records) == [0, 1, 2, 3, 4]
    assert reader.snapshot_splits() == [SourceSplit(f"{topic}:0", {"offset": 5, "end": 5})]


async def test_a_restored_bounded_split_keeps_its_end(kafka_bootstrap: str, topic: str) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=1)
    await produce(kafka_bootstrap, topic, range(5))
    source = KafkaSource(kafka_bootstrap, [topic], stop_at_end=True)
    first = source.create_reader(await splits_of(source, 1), context())
    await first.open()
    await first.read(2)
    snapshot = first.snapshot_splits()
    await first.close()

    await produce(kafka_bootstrap, topic, range(5, 10))
    records = await read_splits(source, snapshot)

    assert values(records) == [2, 3, 4]


async def test_a_bounded_reader_of_an_empty_partition_ends_at_once(
    kafka_bootstrap: str, topic: str
) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=2)
    source = KafkaSource(kafka_bootstrap, [topic], stop_at_end=True)

    assert await read_splits(source, await splits_of(source, 1)) == []


async def test_a_bounded_reader_without_splits_ends_at_once(kafka_bootstrap: str) -> None:
    source = KafkaSource(kafka_bootstrap, ["unused"], stop_at_end=True)

    assert await read_splits(source, []) == []


async def test_an_unbounded_read_returns_a_record_produced_while_it_waits(
    kafka_bootstrap: str, topic: str
) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=1)
    source = KafkaSource(kafka_bootstrap, [topic])
    reader = source.create_reader(await splits_of(source, 1), context())
    await reader.open()
    read: list[KafkaRecord] = []

    async def read_once() -> None:
        read.extend(await reader.read(10))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(read_once)
            expected = await produce(kafka_bootstrap, topic, [1])
    await reader.close()

    assert ids(read) == expected
    assert reader.snapshot_splits() == [SourceSplit(f"{topic}:0", {"offset": 1, "end": None})]


async def test_an_unbounded_read_with_nothing_to_read_is_cancelled_at_once(
    kafka_bootstrap: str, topic: str
) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=1)
    source = KafkaSource(kafka_bootstrap, [topic])
    reader = source.create_reader(await splits_of(source, 1), context())
    await reader.open()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(reader.read, 10)
            await anyio.lowlevel.checkpoint()
            group.cancel_scope.cancel()
    await reader.close()

    assert reader.snapshot_splits() == source.create_splits(1)


async def test_each_partition_is_one_split_at_the_earliest_offset(
    kafka_bootstrap: str, topic: str
) -> None:
    await create_topic(kafka_bootstrap, topic, partitions=3)
    source = KafkaSource(kafka_bootstrap, [topic])

    assert await splits_of(source, 2) == [
        SourceSplit(f"{topic}:{partition}", {"offset": 0, "end": None}) for partition in range(3)
    ]


async def test_a_topic_that_does_not_exist_is_reported_when_splits_are_discovered(
    kafka_bootstrap: str, topic: str
) -> None:
    source = KafkaSource(kafka_bootstrap, [topic])

    with pytest.raises(InputNotFound, match=topic):
        await source.discover_splits()


async def test_a_broker_that_cannot_be_reached_is_reported_when_splits_are_discovered() -> None:
    source = KafkaSource("127.0.0.1:1", ["orders"])

    with pytest.raises(ConnectorError, match=r"cannot reach the Kafka broker at 127\.0\.0\.1:1"):
        await source.discover_splits()


class SilentBroker:
    """A TCP server that accepts a connection and never answers it."""

    def __init__(self) -> None:
        self.connected = anyio.Event()

    async def hold(self, client: anyio.abc.SocketStream) -> None:
        async with client:
            self.connected.set()
            await anyio.sleep_forever()


async def test_asking_a_silent_broker_for_partitions_leaves_the_loop_running() -> None:
    broker = SilentBroker()
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    env = StreamEnvironment()
    source = KafkaSource(f"127.0.0.1:{port}", ["orders"])
    env.from_source(source, uid="orders").sink_to(CollectSink(), uid="out")

    async with listener, anyio.create_task_group() as tasks, LoopLagMonitor() as lag:
        tasks.start_soon(listener.serve, broker.hold)
        async with env.start("silent-broker") as job:
            with anyio.fail_after(5):
                await broker.connected.wait()  # the job waits for the broker's answer
                await lag.wait_measured(20)  # and the loop's other tasks keep running
            job.cancel()  # ends the wait for the broker at once
        tasks.cancel_scope.cancel()

    # the request waits up to 10 s: a blocked loop would show it
    assert lag.statistics().busy_max < STALL, lag.statistics()
    assert job.status is JobStatus.CANCELED


async def test_listing_the_partitions_of_a_broker_never_stalls_the_loop(
    kafka_bootstrap: str, topic: str
) -> None:
    await create_topic(kafka_bootstrap, topic, 3)
    source = KafkaSource(kafka_bootstrap, [topic])

    async with LoopLagMonitor() as lag:
        await lag.wait_measured(1)
        splits = await splits_of(source, 1)
        await lag.wait_measured(10)

    assert len(splits) == 3
    assert lag.statistics().busy_max < STALL, lag.statistics()


def test_splits_cannot_be_made_before_the_partitions_are_discovered() -> None:
    source = KafkaSource("127.0.0.1:1", ["orders"])

    with pytest.raises(ConnectorError, match=r"await discover_splits\(\) before create_splits"):
        source.create_splits(1)


def test_the_source_is_bounded_only_when_it_stops_at_the_end() -> None:
    assert not KafkaSource("127.0.0.1:1", ["a"]).bounded
    assert KafkaSource("127.0.0.1:1", ["a"], stop_at_end=True).bounded


@pytest.mark.parametrize(
    "split",
    [
        SourceSplit("other:0", {"offset": 0, "end": None}),
        SourceSplit("a", {"offset": 0, "end": None}),
        SourceSplit("a:x", {"offset": 0, "end": None}),
        SourceSplit("a:0", {"offset": -1, "end": None}),
        SourceSplit("a:0", {"last_id": "0-0", "end_id": None}),
        SourceSplit("a:0", 0),
    ],
)
def test_a_split_this_source_never_made_is_refused(split: SourceSplit) -> None:
    source = KafkaSource("127.0.0.1:1", ["a"])

    with pytest.raises(InvalidSplit, match=r"'records' \(subtask 1/1\)"):
        source.create_reader([split], context())


@pytest.mark.parametrize(
    ("topics", "message"),
    [([], "non-empty list"), ("orders", "non-empty list"), (["a", "a"], "must not repeat")],
)
def test_topics_that_make_no_sense_are_refused_when_the_source_is_built(
    topics: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        KafkaSource("127.0.0.1:1", topics)


def test_importing_the_connectors_package_does_not_import_aiokafka() -> None:
    code = "import sys, lockgate.connectors; print('aiokafka' in sys.modules)"

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )

    assert result.stdout.strip() == "False"
