"""Jobs reading a real Kafka-protocol broker (Tansu) across a failure, tested as Flink does:
one failure injected after a completed checkpoint (the failing records are only produced once
the map has heard that the checkpoint completed), a guard that it fired, results counted
outside operator state by a transactional sink, exact lists asserted."""

from __future__ import annotations

import re
import uuid
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import anyio
import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from lockgate.connectors import CollectSink
from lockgate.connectors.kafka import KafkaRecord, KafkaSource
from lockgate.engine import StreamEnvironment
from lockgate.engine.testing import FailOnce
from tests.connectors.triggered_jobs import checkpointed_env, commit_everything

pytestmark = pytest.mark.asyncio_only(reason="aiokafka runs on asyncio only")

PARTITIONS = 3


@pytest.fixture
async def topic(request: pytest.FixtureRequest, kafka_bootstrap: str) -> str:
    name = f"{re.sub(r'[^a-zA-Z0-9._-]', '-', request.node.name)}-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, PARTITIONS, replication_factor=1)])
    finally:
        await admin.close()
    return name


async def produce(bootstrap: str, topic: str, values: Iterable[int]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False)
    await producer.start()
    try:
        for value in values:
            await producer.send(topic, str(value).encode(), partition=value % PARTITIONS)
        await producer.flush()
    finally:
        await producer.stop()


class Numbers:
    """Parses records into ints; fails once at the first value from ``fail_from`` on that
    comes after a checkpoint completed; lets the test wait for values and for a checkpoint.

    Not a stateful function, so every subtask and attempt shares this one object.
    """

    def __init__(self, fail_from: int) -> None:
        self.fail = FailOnce(f"failure from {fail_from} on")
        self.fail_from = fail_from
        self._checkpointed = anyio.Event()
        self._seen: defaultdict[int, anyio.Event] = defaultdict(anyio.Event)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self._checkpointed.set()

    def __call__(self, record: KafkaRecord) -> int:
        value = int(record.value or b"")
        if value >= self.fail_from and self._checkpointed.is_set():
            self.fail.maybe_fire()
        self._seen[value].set()
        return value

    async def wait_checkpointed(self) -> None:
        await self._checkpointed.wait()

    async def wait_seen(self, values: Iterable[int]) -> None:
        for value in values:
            await self._seen[value].wait()


@pytest.mark.parametrize("parallelism", [1, 2])
async def test_a_job_commits_every_record_of_a_kafka_topic_once_across_a_failure(
    kafka_bootstrap: str, topic: str, parallelism: int
) -> None:
    await produce(kafka_bootstrap, topic, range(150))
    numbers, sink = Numbers(fail_from=150), CollectSink[int]()
    env = checkpointed_env(parallelism)
    source = KafkaSource(kafka_bootstrap, [topic])
    env.from_source(source, uid="records").map(numbers, uid="numbers").sink_to(sink, uid="out")

    with anyio.fail_after(20):
        async with env.start("kafka-numbers") as job:
            await numbers.wait_seen(range(150))
            await job.trigger_checkpoint()
            await numbers.wait_checkpointed()
            await produce(kafka_bootstrap, topic, range(150, 300))  # fails at once
            await numbers.wait_seen(range(150, 300))
            await commit_everything(job, sink, 300)
            job.cancel()

    assert numbers.fail.fired, "the injected failure never fired: the test proves nothing"
    assert sorted(sink.results) == list(range(300))


async def test_a_bounded_job_reads_every_record_of_every_partition_and_finishes(
    kafka_bootstrap: str, topic: str
) -> None:
    await produce(kafka_bootstrap, topic, range(300))
    sink = CollectSink[int]()
    env = StreamEnvironment(parallelism=2)
    source = KafkaSource(kafka_bootstrap, [topic], stop_at_end=True)
    env.from_source(source, uid="records").map(Numbers(fail_from=-1)).sink_to(sink, uid="out")

    with anyio.fail_after(20):
        await env.execute("bounded-numbers")

    assert sorted(sink.results) == list(range(300))


async def test_a_job_restored_from_its_checkpoint_reads_only_the_records_after_it(
    kafka_bootstrap: str, topic: str, tmp_path: Path
) -> None:
    await produce(kafka_bootstrap, topic, range(50))
    sink = CollectSink[int]()  # the same "external system" for both runs
    numbers = Numbers(fail_from=1_000)
    env = checkpointed_env(2)
    env.set_checkpoint_storage(f"file://{tmp_path}")
    source = KafkaSource(kafka_bootstrap, [topic])
    env.from_source(source, uid="records").map(numbers, uid="n").sink_to(sink, uid="out")
    with anyio.fail_after(20):
        async with env.start("resumed") as job:
            await numbers.wait_seen(range(50))
            await commit_everything(job, sink, 50)
            job.cancel()

    await produce(kafka_bootstrap, topic, range(50, 80))
    env = checkpointed_env(2)
    env.set_checkpoint_storage(f"file://{tmp_path}")
    source = KafkaSource(kafka_bootstrap, [topic], stop_at_end=True)
    env.from_source(source, uid="records").map(numbers, uid="n").sink_to(sink, uid="out")
    with anyio.fail_after(20):
        await env.execute("resumed", restore_from="latest")

    assert sorted(sink.results) == list(range(80))
