"""Redis streams to a Redis stream and a CollectSink across a stop with a savepoint, a restore
from it, and a second stop: the output stream holds every input entry once, and so does the
CollectSink, whose transactions carry the ``StreamEntry`` values through the savepoint."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from redis.asyncio import Redis

from lockgate.connectors import CollectSink
from lockgate.connectors.redis import RedisStreamSink, RedisStreamSource, StreamEntry
from lockgate.engine import StreamEnvironment
from tests.connectors.savepoint_jobs import Progress

pytestmark = pytest.mark.asyncio_only(reason="redis.asyncio runs on asyncio only")

FIRST, MORE = 300, 200


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
def key(request: pytest.FixtureRequest) -> str:
    return f"test:{request.node.originalname}:{uuid.uuid4().hex[:8]}"  # no [...] pattern


async def append(redis: Redis, stream: str, values: range) -> None:
    for value in values:
        await redis.xadd(stream, {"n": str(value)})


async def append_to_each(redis: Redis, streams: list[str], count: range) -> None:
    for index, stream in enumerate(streams):
        await append(
            redis, stream, range(index * 10_000 + count.start, index * 10_000 + count.stop)
        )


@dataclass
class StreamsJob:
    """Two input streams to an output stream and to ``kept``; one object for both runs."""

    url: str
    key: str
    progress: Progress = field(default_factory=Progress)
    kept: CollectSink[StreamEntry] = field(default_factory=CollectSink)

    @property
    def inputs(self) -> list[str]:
        return [f"{self.key}:in:0", f"{self.key}:in:1"]

    @property
    def output(self) -> str:
        return f"{self.key}:out"

    def env(self) -> StreamEnvironment:
        env = StreamEnvironment(parallelism=2, batch_size=50)
        env.enable_checkpointing(None)
        source = RedisStreamSource(self.url, self.inputs, block_ms=100)
        passed = env.from_source(source, uid="entries").map(self.progress, uid="progress")
        passed.sink_to(RedisStreamSink(self.url, self.output), uid="out")
        passed.sink_to(self.kept, uid="kept")
        return env


async def written(redis: Redis, stream: str) -> list[int]:
    return sorted(int(fields[b"n"]) for _, fields in await redis.xrange(stream))


async def test_a_redis_job_stopped_with_a_savepoint_and_restored_appends_every_entry_once(
    redis: Redis, redis_url: str, key: str, tmp_path: Path
) -> None:
    streams = StreamsJob(redis_url, key)
    await append_to_each(redis, streams.inputs, range(FIRST))
    with anyio.fail_after(30):
        async with streams.env().start("streams") as job:
            await streams.progress.wait_passed(2 * FIRST)
            savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    first = await written(redis, streams.output)

    await append_to_each(redis, streams.inputs, range(FIRST, FIRST + MORE))
    with anyio.fail_after(30):
        async with streams.env().start("streams", restore_from=savepoint) as job:
            await streams.progress.wait_passed(2 * (FIRST + MORE))
            await job.stop_with_savepoint(tmp_path.as_uri())

    expected = [index * 10_000 + n for index in range(2) for n in range(FIRST + MORE)]
    assert first == [n for n in expected if n % 10_000 < FIRST]
    assert await written(redis, streams.output) == expected
    assert sorted(int(entry.fields["n"]) for entry in streams.kept.results) == expected
    assert await redis.keys(f"{streams.output}:lockgate:*") == []  # no window left behind
