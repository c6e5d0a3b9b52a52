"""RedisStreamSource with a watermark strategy: each stream a split with its own watermark."""

from __future__ import annotations

import math

import pytest
from redis.asyncio import Redis

from lockgate.connectors.redis import RedisStreamSource, StreamEntry
from lockgate.engine import StreamEnvironment, WatermarkStrategy
from tests.connectors.redis.test_source import append, key, redis  # noqa: F401
from tests.engine.jobs.event_time import WatermarkLog, below

pytestmark = pytest.mark.asyncio_only(reason="redis.asyncio runs on asyncio only")

BY_N = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
    lambda entry: float(entry.fields["n"])
)


def n_of(entry: StreamEntry) -> float:
    return float(entry.fields["n"])


async def test_the_watermark_is_the_minimum_over_the_streams_until_one_ends(
    redis: Redis,  # noqa: F811
    redis_url: str,
    key: str,  # noqa: F811
) -> None:
    fast, slow = f"{key}:fast", f"{key}:slow"
    await append(redis, fast, range(100, 200))
    await append(redis, slow, range(10))
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0)
    log = WatermarkLog()
    source = RedisStreamSource(redis_url, [fast, slow], stop_at_end=True)
    env.from_source(source, uid="streams", watermark_strategy=BY_N).map(n_of).sink_to(
        log, uid="log"
    )

    await env.execute("streams")

    before_slow_ended = log.logs[0][: log.logs[0].index(9.0)]
    assert max(w.timestamp for w in before_slow_ended if not isinstance(w, float)) <= below(8)
    assert max(log.watermarks()[:-1]) > 150.0  # the slow stream ended: it holds nothing back
    assert log.watermarks()[-1] == math.inf
