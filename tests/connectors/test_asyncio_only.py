"""Connectors whose client library runs on asyncio only (aiokafka, redis.asyncio, asyncpg,
aiobotocore) refuse a job on trio when it deploys them: an ``AsyncioRequired`` naming the
connector, raised once, never retried, before any record flows or any server is asked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from lockgate.connectors import (
    CollectionSource,
    CollectSink,
    KafkaSink,
    KafkaSource,
    PostgresSink,
    RedisStreamSink,
    RedisStreamSource,
    S3FileSink,
)
from lockgate.engine import (
    AsyncioRequired,
    JobClient,
    JobStatus,
    RestartStrategy,
    Sink,
    Source,
    SourceContext,
    SourceSplit,
    StreamEnvironment,
    SystemClock,
)

NOWHERE = "127.0.0.1:9"  # never asked: the job fails before any connection

SOURCES: dict[str, tuple[Callable[[], Source[Any]], str]] = {
    "kafka": (lambda: KafkaSource(NOWHERE, ["orders"]), "Kafka source of topics ['orders']"),
    "redis": (
        lambda: RedisStreamSource(f"redis://{NOWHERE}", ["orders"]),
        "Redis stream source 'in' (subtask 1/1)",
    ),
}
SINKS: dict[str, tuple[Callable[[], Sink[Any]], str]] = {
    "kafka": (lambda: KafkaSink(NOWHERE, "orders"), "Kafka sink 'out' (subtask 1/1)"),
    "redis": (
        lambda: RedisStreamSink(f"redis://{NOWHERE}", "orders"),
        "Redis stream sink 'out' (subtask 1/1)",
    ),
    "postgres": (
        lambda: PostgresSink(f"postgresql://{NOWHERE}/db", table="orders", columns=["n"]),
        "PostgreSQL sink 'out' (subtask 1/1)",
    ),
    "s3": (
        lambda: S3FileSink("bucket", "orders", endpoint_url=f"http://{NOWHERE}"),
        "S3 file sink 'out' (subtask 1/1)",
    ),
}


def run_on_trio(source: Source[Any], sink: Sink[Any]) -> tuple[JobClient, AsyncioRequired]:
    env = StreamEnvironment()
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    env.from_source(source, uid="in").sink_to(sink, uid="out")
    started: list[JobClient] = []

    async def main() -> None:
        with anyio.fail_after(10):
            async with env.start("on-trio") as job:
                started.append(job)
                await job.wait()

    with pytest.raises(AsyncioRequired) as failure:
        anyio.run(main, backend="trio")
    return started[0], failure.value


@pytest.mark.parametrize("name", list(SOURCES))
def test_a_job_on_trio_fails_at_once_naming_its_asyncio_only_source(name: str) -> None:
    make, named = SOURCES[name]

    job, error = run_on_trio(make(), CollectSink())

    assert f"{named} needs asyncio" in str(error)
    assert "runs on asyncio only" in str(error) and "backend='asyncio'" in str(error)
    assert job.status is JobStatus.FAILED
    assert [failure.exception for failure in job.failures] == [error]  # no restart


@pytest.mark.parametrize("name", list(SINKS))
def test_a_job_on_trio_fails_at_once_naming_its_asyncio_only_sink(name: str) -> None:
    make, named = SINKS[name]

    job, error = run_on_trio(CollectionSource(range(10)), make())

    assert f"{named} needs asyncio" in str(error)
    assert job.status is JobStatus.FAILED
    assert [failure.exception for failure in job.failures] == [error]


def test_a_kafka_source_resumed_on_trio_names_its_operator_and_subtask() -> None:
    source = KafkaSource(NOWHERE, ["orders"])
    split = SourceSplit("orders:0", {"offset": 5, "end": None})
    context = SourceContext("orders-in", 1, 2, SystemClock())

    async def resume() -> None:
        source.create_reader([split], context)

    with pytest.raises(AsyncioRequired, match=r"Kafka source 'orders-in' \(subtask 2/2\)"):
        anyio.run(resume, backend="trio")
