"""RedisStreamSink against a real Redis: appends, and replays that append nothing twice."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis

from lockgate.connectors.errors import ConnectorError, UnencodableRecord
from lockgate.connectors.redis import RedisStreamSink, RedisStreamWriter, StreamEntry
from lockgate.engine import SinkContext, SystemClock

pytestmark = pytest.mark.asyncio_only(reason="redis.asyncio runs on asyncio only")


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
def key(request: pytest.FixtureRequest) -> str:
    return f"test:{request.node.originalname}:{uuid.uuid4().hex[:8]}"  # no [...] pattern


def context(*, attempt: int = 0, restored: list[Any] | None = None) -> SinkContext:
    return SinkContext(
        uid="out",
        subtask_index=0,
        parallelism=1,
        clock=SystemClock(),
        restored_state=tuple(restored or ()),
        job_name="numbers",
        attempt=attempt,
    )


def numbers(*values: int) -> list[dict[str, int]]:
    return [{"n": value} for value in values]


async def opened(sink: RedisStreamSink[Any], ctx: SinkContext) -> RedisStreamWriter[Any]:
    writer = sink.create_writer(ctx)
    await writer.open()
    return writer


async def stream_values(redis: Redis, stream: str) -> list[int]:
    return [int(fields[b"n"]) for _, fields in await redis.xrange(stream)]


async def checkpointed(writer: RedisStreamWriter[Any], checkpoint_id: int) -> list[Any]:
    state = await writer.snapshot_state(checkpoint_id)
    await writer.notify_checkpoint_complete(checkpoint_id)
    return state


async def test_records_are_appended_as_entries_in_order(
    redis: Redis, redis_url: str, key: str
) -> None:
    writer = await opened(RedisStreamSink(redis_url, key), context())

    await writer.write([{"n": 1, "text": "é", "raw": b"\x00", "ratio": 0.5}, {"n": 2}])
    await writer.close()

    [(_, first), (_, second)] = await redis.xrange(key)
    assert first == {b"n": b"1", b"text": "é".encode(), b"raw": b"\x00", b"ratio": b"0.5"}
    assert second == {b"n": b"2"}


async def test_stream_entries_are_appended_with_their_fields(
    redis: Redis, redis_url: str, key: str
) -> None:
    writer = await opened(RedisStreamSink(redis_url, key), context())

    await writer.write([StreamEntry("in", "1-0", {"n": "5"})])
    await writer.close()

    assert await stream_values(redis, key) == [5]


async def test_an_encode_function_turns_records_into_fields(
    redis: Redis, redis_url: str, key: str
) -> None:
    sink = RedisStreamSink(redis_url, key, encode=lambda value: {"n": value * 10})
    writer = await opened(sink, context())

    await writer.write([1, 2])
    await writer.close()

    assert await stream_values(redis, key) == [10, 20]


async def test_a_batch_written_again_after_a_restore_is_not_appended_twice(
    redis: Redis, redis_url: str, key: str
) -> None:
    sink = RedisStreamSink(redis_url, key)
    first = await opened(sink, context())
    await first.write(numbers(0))
    state = await checkpointed(first, 1)
    await first.write(numbers(1, 2, 3))
    await first.close()  # the attempt fails here

    second = await opened(sink, context(attempt=1, restored=state))
    await second.write(numbers(1, 2, 3))
    await second.close()

    assert await stream_values(redis, key) == [0, 1, 2, 3]
    assert second.statistics().skipped == 3
    assert second.statistics().appended == 0


async def test_a_replay_in_another_order_is_not_appended_twice(
    redis: Redis, redis_url: str, key: str
) -> None:
    sink = RedisStreamSink(redis_url, key)
    first = await opened(sink, context())
    state = await checkpointed(first, 1)
    await first.write(numbers(1, 2, 3))
    await first.close()

    second = await opened(sink, context(attempt=1, restored=state))
    await second.write(numbers(3, 1))
    await second.write(numbers(2))
    await second.close()

    assert await stream_values(redis, key) == [1, 2, 3]


async def test_a_replay_appends_only_the_records_the_failed_attempt_did_not(
    redis: Redis, redis_url: str, key: str
) -> None:
    sink = RedisStreamSink(redis_url, key)
    first = await opened(sink, context())
    state = await checkpointed(first, 1)
    await first.write(numbers(1, 2))
    await first.close()

    second = await opened(sink, context(attempt=1, restored=state))
    await second.write(numbers(1, 2, 3, 4))
    await second.close()

    assert await stream_values(redis, key) == [1, 2, 3, 4]
    assert (second.statistics().skipped, second.statistics().appended) == (2, 2)


async def test_identical_records_are_counted_not_collapsed(
    redis: Redis, redis_url: str, key: str
) -> None:
    sink = RedisStreamSink(redis_url, key)
    first = await opened(sink, context())
    state = await checkpointed(first, 1)
    await first.write(numbers(7, 7))
    await first.close()

    second = await opened(sink, context(attempt=1, restored=state))
    await second.write(numbers(7, 7, 7))
    await second.close()

    assert await stream_values(redis, key) == [7, 7, 7]


async def test_records_before_the_restored_checkpoint_are_appended_again_when_replayed(
    redis: Redis, redis_url: str, key: str
) -> None:
    # A completed checkpoint covers them: a job restored from it never replays them, so an
    # identical record after it is a new record.
    sink = RedisStreamSink(redis_url, key)
    first = await opened(sink, context())
    await first.write(numbers(1))
    state = await checkpointed(first, 1)
    await first.close()

    second = await opened(sink, context(attempt=1, restored=state))
    await second.write(numbers(1))
    await second.close()

    assert await stream_values(redis, key) == [1, 1]


async def test_a_restart_before_any_checkpoint_appends_nothing_twice(
    redis: Redis, redis_url: str, key: str
) -> None:
    sink = RedisStreamSink(redis_url, key)
    first = await opened(sink, context())
    await first.write(numbers(1, 2))
    await first.close()

    second = await opened(sink, context(attempt=1))
    await second.write(numbers(1, 2, 3))
    await second.close()

    assert await stream_values(redis, key) == [1, 2, 3]


async def test_a_fresh_run_of_the_same_job_appends_its_records_again(
    redis: Redis, redis_url: str, key: str
) -> None:
    sink = RedisStreamSink(redis_url, key)
    for _ in range(2):
        writer = await opened(sink, context())
        await writer.write(numbers(1))
        await writer.close()

    assert await stream_values(redis, key) == [1, 1]


async def test_two_failures_in_a_row_still_append_each_record_once(
    redis: Redis, redis_url: str, key: str
) -> None:
    sink = RedisStreamSink(redis_url, key)
    first = await opened(sink, context())
    state = await checkpointed(first, 1)
    await first.write(numbers(*range(10)))
    await first.close()

    second = await opened(sink, context(attempt=1, restored=state))
    await second.write(numbers(*range(5)))
    state = await checkpointed(second, 2)
    await second.write(numbers(*range(5, 15)))
    await second.close()

    third = await opened(sink, context(attempt=2, restored=state))
    await third.write(numbers(*range(5, 20)))
    await third.close()

    assert await stream_values(redis, key) == list(range(20))


async def test_a_restored_writer_settles_a_checkpoint_whose_notification_was_lost(
    redis: Redis, redis_url: str, key: str
) -> None:
    # The notification of checkpoint 2 was lost: the restored writer settles it on open.
    sink = RedisStreamSink(redis_url, key)
    first = await opened(sink, context())
    await first.write(numbers(1, 2))
    state = await first.snapshot_state(2)
    await first.write(numbers(3))
    await first.close()

    second = await opened(sink, context(attempt=1, restored=state))
    await second.write(numbers(3, 1))
    await second.close()

    assert await stream_values(redis, key) == [1, 2, 3, 1]


async def test_a_completed_checkpoint_leaves_only_the_stream_in_redis(
    redis: Redis, redis_url: str, key: str
) -> None:
    writer = await opened(RedisStreamSink(redis_url, key), context())
    await writer.write(numbers(1, 2))
    await checkpointed(writer, 1)
    await writer.close()

    assert await redis.keys(f"{key}*") == [key.encode()]


async def test_maxlen_keeps_only_the_newest_entries(redis: Redis, redis_url: str, key: str) -> None:
    writer = await opened(RedisStreamSink(redis_url, key, maxlen=3), context())

    await writer.write(numbers(*range(10)))
    await writer.close()

    assert await stream_values(redis, key) == [7, 8, 9]


@pytest.mark.parametrize("record", [3, {}, {"n": True}, {"n": None}])
async def test_a_record_that_is_not_a_mapping_of_fields_is_refused(
    redis_url: str, key: str, record: Any
) -> None:
    writer = await opened(RedisStreamSink(redis_url, key), context())

    with pytest.raises(UnencodableRecord, match=r"'out' \(subtask 1/1\).*encode="):
        await writer.write([record])
    await writer.close()


def test_state_of_another_sink_is_refused_on_restore(redis_url: str, key: str) -> None:
    sink = RedisStreamSink(redis_url, key)

    with pytest.raises(ConnectorError, match=r"'out' \(subtask 1/1\)"):
        sink.create_writer(context(restored=[{"transaction_id": "x"}]))


@pytest.mark.parametrize(
    ("options", "message"), [({"maxlen": 0}, "maxlen"), ({"window_ttl": 0}, "window_ttl")]
)
def test_options_that_make_no_sense_are_refused_when_the_sink_is_built(
    redis_url: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        RedisStreamSink(redis_url, "out", **options)
