"""RedisStreamSource against a real Redis: splits, positions, waiting and ending."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterable
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from redis.asyncio import Redis

from lockgate.connectors.errors import InvalidSplit, UndecodableInput
from lockgate.connectors.redis import RedisStreamSource, StreamEntry
from lockgate.engine import SourceContext, SourceReader, SourceSplit, SystemClock
from lockgate.engine.io.sources import assign_splits

pytestmark = pytest.mark.asyncio_only(reason="redis.asyncio runs on asyncio only")


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
def key(request: pytest.FixtureRequest) -> str:
    return f"test:{request.node.originalname}:{uuid.uuid4().hex[:8]}"  # no [...] pattern


def context(index: int = 0, parallelism: int = 1) -> SourceContext:
    return SourceContext("entries", index, parallelism, SystemClock())


async def append(redis: Redis, stream: str, values: Iterable[int]) -> list[str]:
    return [(await redis.xadd(stream, {"n": str(value)})).decode() for value in values]


async def read_out(reader: SourceReader[Any], max_records: int = 7) -> list[Any]:
    records: list[Any] = []
    while batch := await reader.read(max_records):
        records += batch
    return records


async def read_splits(source: RedisStreamSource[Any], splits: list[SourceSplit]) -> list[Any]:
    reader = source.create_reader(splits, context())
    await reader.open()
    try:
        return await read_out(reader)
    finally:
        await reader.close()


def ids(records: list[StreamEntry]) -> list[tuple[str, str]]:
    return [(record.stream, record.entry_id) for record in records]


@pytest.mark.parametrize("parallelism", [1, 2, 3])
async def test_splits_over_any_parallelism_cover_every_entry_once(
    redis: Redis, redis_url: str, key: str, parallelism: int
) -> None:
    streams = [f"{key}:{index}" for index in range(4)]
    expected = [(s, i) for n, s in enumerate(streams) for i in await append(redis, s, range(n * 9))]
    source = RedisStreamSource(redis_url, streams, stop_at_end=True)
    splits = source.create_splits(parallelism)

    read = []
    for index in range(parallelism):
        subtask_splits = assign_splits(splits, index, parallelism)
        read += ids(await read_splits(source, subtask_splits))

    assert sorted(read) == sorted(expected)
    assert len(read) == len(expected)


async def test_a_subtask_reading_several_streams_keeps_each_streams_order(
    redis: Redis, redis_url: str, key: str
) -> None:
    streams = [f"{key}:a", f"{key}:b"]
    expected = {stream: await append(redis, stream, range(20)) for stream in streams}
    source = RedisStreamSource(redis_url, streams, stop_at_end=True)

    read = ids(await read_splits(source, source.create_splits(1)))

    for stream in streams:
        assert [entry_id for s, entry_id in read if s == stream] == expected[stream]


async def test_a_reader_resumes_exactly_after_its_snapshot(
    redis: Redis, redis_url: str, key: str
) -> None:
    streams = [f"{key}:a", f"{key}:b"]
    expected = [(s, i) for s in streams for i in await append(redis, s, range(30))]
    source = RedisStreamSource(redis_url, streams, stop_at_end=True)
    first = source.create_reader(source.create_splits(1), context())
    await first.open()
    before = await first.read(10) + await first.read(10)
    snapshot = first.snapshot_splits()
    await first.close()

    after = await read_splits(source, snapshot)

    assert sorted(ids(before + after)) == sorted(expected)
    assert len(before + after) == len(expected)


async def test_records_are_stream_entries_with_text_fields(
    redis: Redis, redis_url: str, key: str
) -> None:
    [entry_id] = await append(redis, key, [7])
    source = RedisStreamSource(redis_url, [key], stop_at_end=True)

    records = await read_splits(source, source.create_splits(1))

    assert records == [StreamEntry(key, entry_id, {"n": "7"})]
    assert records == [(key, entry_id, {"n": "7"})]


async def test_a_decode_function_shapes_each_record(redis: Redis, redis_url: str, key: str) -> None:
    await append(redis, key, range(5))
    source = RedisStreamSource(
        redis_url,
        [key],
        decode=lambda stream, entry_id, fields: int(fields[b"n"]),
        stop_at_end=True,
    )

    assert await read_splits(source, source.create_splits(1)) == [0, 1, 2, 3, 4]


async def test_a_field_that_is_not_utf8_cannot_be_read_as_text(
    redis: Redis, redis_url: str, key: str
) -> None:
    await redis.xadd(key, {"n": b"\xff"})
    source = RedisStreamSource(redis_url, [key], stop_at_end=True)

    with pytest.raises(UndecodableInput, match=key):
        await read_splits(source, source.create_splits(1))


async def test_reading_starts_after_the_start_id(redis: Redis, redis_url: str, key: str) -> None:
    entry_ids = await append(redis, key, range(6))
    source = RedisStreamSource(redis_url, [key], start_id=entry_ids[2], stop_at_end=True)

    records = await read_splits(source, source.create_splits(1))

    assert [record.entry_id for record in records] == entry_ids[3:]


async def test_a_bounded_source_stops_at_the_last_entry_when_it_opened(
    redis: Redis, redis_url: str, key: str
) -> None:
    await append(redis, key, range(5))
    source = RedisStreamSource(redis_url, [key], stop_at_end=True)
    reader = source.create_reader(source.create_splits(1), context())
    await reader.open()

    await append(redis, key, range(5, 10))
    records = await read_out(reader)
    await reader.close()

    assert [record.fields["n"] for record in records] == ["0", "1", "2", "3", "4"]


async def test_a_restored_bounded_split_keeps_its_end(
    redis: Redis, redis_url: str, key: str
) -> None:
    await append(redis, key, range(5))
    source = RedisStreamSource(redis_url, [key], stop_at_end=True)
    first = source.create_reader(source.create_splits(1), context())
    await first.open()
    await first.read(2)
    snapshot = first.snapshot_splits()
    await first.close()

    await append(redis, key, range(5, 10))
    records = await read_splits(source, snapshot)

    assert [record.fields["n"] for record in records] == ["2", "3", "4"]


async def test_a_bounded_reader_of_an_empty_or_missing_stream_ends_at_once(
    redis_url: str, key: str
) -> None:
    source = RedisStreamSource(redis_url, [key], stop_at_end=True)

    assert await read_splits(source, source.create_splits(1)) == []


async def test_a_bounded_reader_without_splits_ends_at_once(redis_url: str, key: str) -> None:
    source = RedisStreamSource(redis_url, [key], stop_at_end=True)

    assert await read_splits(source, []) == []


async def test_an_unbounded_read_returns_an_entry_appended_while_it_waits(
    redis: Redis, redis_url: str, key: str
) -> None:
    source = RedisStreamSource(redis_url, [key], block_ms=50)
    reader = source.create_reader(source.create_splits(1), context())
    await reader.open()
    read: list[StreamEntry] = []

    async def read_once() -> None:
        read.extend(await reader.read(10))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(read_once)
            [entry_id] = await append(redis, key, [1])
    await reader.close()

    assert ids(read) == [(key, entry_id)]
    assert reader.snapshot_splits() == [SourceSplit(key, {"last_id": entry_id, "end_id": None})]


async def test_an_unbounded_read_blocked_in_redis_is_cancelled_at_once(
    redis: Redis, redis_url: str, key: str
) -> None:
    source = RedisStreamSource(redis_url, [key], block_ms=600_000)
    reader = source.create_reader(source.create_splits(1), context())
    await reader.open()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(reader.read, 10)
            await wait_until_a_client_blocks(redis)
            group.cancel_scope.cancel()
    await reader.close()

    assert reader.snapshot_splits() == source.create_splits(1)


async def wait_until_a_client_blocks(redis: Redis) -> None:
    # Each round trip asks Redis itself; the caller bounds the wait with fail_after.
    while (await redis.info("clients"))["blocked_clients"] < 1:
        await anyio.lowlevel.checkpoint()


def test_the_source_is_bounded_only_when_it_stops_at_the_end(redis_url: str) -> None:
    assert not RedisStreamSource(redis_url, ["a"]).bounded
    assert RedisStreamSource(redis_url, ["a"], stop_at_end=True).bounded


def test_each_stream_is_one_split_at_the_start_id(redis_url: str) -> None:
    source = RedisStreamSource(redis_url, ["a", "b"], start_id="5-0")

    assert source.create_splits(3) == [
        SourceSplit("a", {"last_id": "5-0", "end_id": None}),
        SourceSplit("b", {"last_id": "5-0", "end_id": None}),
    ]


@pytest.mark.parametrize(
    "split",
    [
        SourceSplit("other", {"last_id": "0-0", "end_id": None}),
        SourceSplit("a", {"next": 0, "end": 3}),
        SourceSplit("a", {"last_id": "$", "end_id": None}),
        SourceSplit("a", "0-0"),
    ],
)
def test_a_split_this_source_never_made_is_refused(redis_url: str, split: SourceSplit) -> None:
    source = RedisStreamSource(redis_url, ["a"])

    with pytest.raises(InvalidSplit, match=r"'entries' \(subtask 1/1\)"):
        source.create_reader([split], context())


@pytest.mark.parametrize(
    ("streams", "options", "message"),
    [
        ([], {}, "non-empty list"),
        ("orders", {}, "non-empty list"),
        (["a", "a"], {}, "must not repeat"),
        (["a"], {"start_id": "$"}, "cannot be replayed"),
        (["a"], {"block_ms": 0}, "block_ms"),
    ],
)
def test_options_that_make_no_sense_are_refused_when_the_source_is_built(
    redis_url: str, streams: Any, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        RedisStreamSource(redis_url, streams, **options)


def test_importing_the_connectors_package_does_not_import_redis() -> None:
    code = "import sys, lockgate.connectors; print('redis' in sys.modules)"

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )

    assert result.stdout.strip() == "False"
