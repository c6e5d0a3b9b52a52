"""Jobs on real Redis streams across a failure, tested as Flink does: one failure injected
after a completed checkpoint (the failing entry is only appended once the checkpoint has
completed), a guard that it fired, results counted outside operator state, exact sets."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import anyio
import pytest
from redis.asyncio import Redis

from lockgate.connectors import CollectSink
from lockgate.connectors.redis import RedisStreamSink, RedisStreamSource, StreamEntry
from lockgate.engine import StreamEnvironment
from lockgate.engine.testing import FailOnce
from tests.connectors.triggered_jobs import checkpointed_env, commit_everything

pytestmark = pytest.mark.asyncio_only(reason="redis.asyncio runs on asyncio only")


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
def key(request: pytest.FixtureRequest) -> str:
    return f"test:{request.node.originalname}:{uuid.uuid4().hex[:8]}"  # no [...] pattern


async def append(redis: Redis, stream: str, values: Iterable[int]) -> None:
    for value in values:
        await redis.xadd(stream, {"n": str(value)})


class Numbers:
    """Parses entries into ints, fails once at ``fail_at``, and lets the test wait for values.

    Not a stateful function, so every subtask and attempt shares this one object.
    """

    def __init__(self, fail_at: int) -> None:
        self.fail = FailOnce(f"failure at {fail_at}")
        self.fail_at = fail_at
        self._seen: defaultdict[int, anyio.Event] = defaultdict(anyio.Event)

    def __call__(self, entry: StreamEntry) -> int:
        value = int(entry.fields["n"])
        if value == self.fail_at:
            self.fail.maybe_fire()
        self._seen[value].set()
        return value

    async def wait_seen(self, value: int) -> None:
        await self._seen[value].wait()


async def test_a_job_commits_every_entry_of_a_redis_stream_once_across_a_failure(
    redis: Redis, redis_url: str, key: str
) -> None:
    await append(redis, key, range(100))
    numbers, sink = Numbers(fail_at=150), CollectSink[int]()
    env = checkpointed_env(1)
    source = RedisStreamSource(redis_url, [key], block_ms=100)
    env.from_source(source, uid="entries").map(numbers, uid="numbers").sink_to(sink, uid="out")

    with anyio.fail_after(30):
        async with env.start("redis-numbers") as job:
            await numbers.wait_seen(99)
            await job.trigger_checkpoint()
            await append(redis, key, range(100, 200))  # fails at 150, after the checkpoint
            await numbers.wait_seen(199)  # only the restored attempt gets past 150
            await commit_everything(job, sink, 200)
            job.cancel()

    assert numbers.fail.fired, "the injected failure never fired: the test proves nothing"
    assert sink.results == list(range(200))


async def wait_for_values(redis: Redis, stream: str, expected: set[int]) -> None:
    seen: set[int] = set()
    last = "0-0"
    while not expected <= seen:
        for _, entries in await redis.xread({stream: last}, block=100) or []:
            for entry_id, fields in entries:
                seen.add(int(fields[b"n"]))
                last = entry_id


async def test_a_redis_to_redis_job_appends_every_record_once_across_a_failure(
    redis: Redis, redis_url: str, key: str
) -> None:
    inputs, output = [f"{key}:in:0", f"{key}:in:1"], f"{key}:out"
    for index, stream in enumerate(inputs):
        await append(redis, stream, range(index * 1000, index * 1000 + 100))
    numbers = Numbers(fail_at=150)
    env = checkpointed_env(2)
    (
        env.from_source(RedisStreamSource(redis_url, inputs, block_ms=100), uid="entries")
        .map(numbers, uid="numbers")
        .sink_to(RedisStreamSink(redis_url, output, encode=lambda n: {"n": n}), uid="out")
    )
    expected = {n for start in (0, 1000) for n in range(start, start + 200)}

    with anyio.fail_after(30):
        async with env.start("redis-to-redis") as job:
            await numbers.wait_seen(99)
            await numbers.wait_seen(1099)
            await job.trigger_checkpoint()
            for index, stream in enumerate(inputs):  # 150 fails, after the checkpoint
                await append(redis, stream, range(index * 1000 + 100, index * 1000 + 200))
            await wait_for_values(redis, output, expected)
            await job.trigger_checkpoint()  # every record before it is appended
            job.cancel()

    assert numbers.fail.fired, "the injected failure never fired: the test proves nothing"
    written = [int(fields[b"n"]) for _, fields in await redis.xrange(output)]
    assert sorted(written) == sorted(expected)


async def test_a_bounded_job_reads_every_entry_of_several_streams_and_finishes(
    redis: Redis, redis_url: str, key: str
) -> None:
    streams = [f"{key}:{index}" for index in range(3)]
    for index, stream in enumerate(streams):
        await append(redis, stream, range(index * 100, index * 100 + 50))
    sink = CollectSink[int]()
    env = StreamEnvironment(parallelism=2)
    source = RedisStreamSource(redis_url, streams, stop_at_end=True)
    env.from_source(source, uid="entries").map(Numbers(fail_at=-1)).sink_to(sink, uid="out")

    with anyio.fail_after(30):
        await env.execute("bounded-numbers")

    assert sorted(sink.results) == [n for start in (0, 100, 200) for n in range(start, start + 50)]


async def test_a_job_restored_from_its_checkpoint_reads_only_the_entries_after_it(
    redis: Redis, redis_url: str, key: str, tmp_path: Path
) -> None:
    await append(redis, key, range(50))
    sink = CollectSink[int]()  # the same "external system" for both runs
    numbers = Numbers(fail_at=-1)
    env = checkpointed_env(1)
    env.set_checkpoint_storage(f"file://{tmp_path}")
    source = RedisStreamSource(redis_url, [key], block_ms=100)
    env.from_source(source, uid="entries").map(numbers, uid="n").sink_to(sink, uid="out")
    with anyio.fail_after(30):
        async with env.start("resumed") as job:
            await numbers.wait_seen(49)
            await commit_everything(job, sink, 50)
            job.cancel()

    await append(redis, key, range(50, 80))
    env = checkpointed_env(1)
    env.set_checkpoint_storage(f"file://{tmp_path}")
    source = RedisStreamSource(redis_url, [key], stop_at_end=True)
    env.from_source(source, uid="entries").map(numbers, uid="n").sink_to(sink, uid="out")
    with anyio.fail_after(30):
        await env.execute("resumed", restore_from="latest")

    assert sink.results == list(range(80))
