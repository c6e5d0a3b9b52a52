"""Redis streams to a Redis stream across a stop with a savepoint, a restore from it, and a
second stop: the output stream holds every input entry once."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from redis.asyncio import Redis

from lockgate.connectors.redis_streams import RedisStreamSink, RedisStreamSource
from lockgate.engine import StreamEnvironment

from .savepoint_jobs import Progress

FIRST, MORE = 300, 200


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
def key(request: pytest.FixtureRequest) -> str:
    return f"test:{request.node.name}:{uuid.uuid4().hex[:8]}"


async def append(redis: Redis, stream: str, values: range) -> None:
    for value in values:
        await redis.xadd(stream, {"n": str(value)})


async def append_to_each(redis: Redis, streams: list[str], count: range) -> None:
    for index, stream in enumerate(streams):
        await append(
            redis, stream, range(index * 10_000 + count.start, index * 10_000 + count.stop)
        )


def streams_job(url: str, inputs: list[str], output: str, progress: Progress) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, batch_size=50)
    env.enable_checkpointing(None)
    (
        env.from_source(RedisStreamSource(url, inputs, block_ms=100), uid="entries")
        .map(progress, uid="progress")
        .sink_to(RedisStreamSink(url, output), uid="out")
    )
    return env


async def written(redis: Redis, stream: str) -> list[int]:
    return sorted(int(fields[b"n"]) for _, fields in await redis.xrange(stream))


async def test_a_redis_job_stopped_with_a_savepoint_and_restored_appends_every_entry_once(
    redis: Redis, redis_url: str, key: str, tmp_path: Path
) -> None:
    inputs, output, progress = [f"{key}:in:0", f"{key}:in:1"], f"{key}:out", Progress()
    await append_to_each(redis, inputs, range(FIRST))
    with anyio.fail_after(30):
        async with streams_job(redis_url, inputs, output, progress).start("streams") as job:
            await progress.wait_passed(2 * FIRST)
            savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    first = await written(redis, output)

    await append_to_each(redis, inputs, range(FIRST, FIRST + MORE))
    restored = streams_job(redis_url, inputs, output, progress)
    with anyio.fail_after(30):
        async with restored.start("streams", restore_from=savepoint) as job:
            await progress.wait_passed(2 * (FIRST + MORE))
            await job.stop_with_savepoint(tmp_path.as_uri())

    expected = [index * 10_000 + n for index in range(2) for n in range(FIRST + MORE)]
    assert first == [n for n in expected if n % 10_000 < FIRST]
    assert await written(redis, output) == expected
    assert await redis.keys(f"{output}:lockgate:*") == []  # a finished job leaves no window
