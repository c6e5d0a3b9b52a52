"""Jobs on RocksDB restore exactly what their write-back caches held at each checkpoint.

With few keys every write of the checkpoint lives only in the cache until the snapshot
writes it back; with 10,000 keys and a cache of 100 entries nearly all of it was evicted
to RocksDB before. Either way, after a failure injected after a completed checkpoint, the
running counts go on exactly: no count lost, none twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import RestartStrategy, StreamEnvironment
from lockgate.engine.testing import AwaitCheckpoint, FailOnce


def numbers(count: int, fail: FailOnce) -> list[Any]:
    """0..count-1 with a completed checkpoint awaited at 40%, then a failure at 60%."""
    first, second = count * 2 // 5, count * 3 // 5
    return [*range(first), AwaitCheckpoint(), *range(first, second), fail, *range(second, count)]


def counts_job(
    tmp_path: Path, values: list[Any], keys: int, sink: CollectSink[Any], **rocksdb: Any
) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, batch_size=256)
    env.enable_checkpointing(0.05)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    env.set_state_backend("rocksdb", path=tmp_path / "databases", **rocksdb)
    (
        env.from_source(CollectionSource(values), uid="numbers", parallelism=1)
        .map(lambda value: (value % keys, 1))
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="out")
    )
    return env


def every_count(keys: int, per_key: int) -> list[tuple[int, int]]:
    return [(key, count) for key in range(keys) for count in range(1, per_key + 1)]


@pytest.mark.parametrize("incremental", [False, True])
async def test_a_restore_after_a_failure_sees_every_write_the_cache_held(
    tmp_path: Path, incremental: bool
) -> None:
    fail, sink = FailOnce(), CollectSink[Any]()
    env = counts_job(tmp_path, numbers(4_000, fail), 40, sink, incremental=incremental)

    async with env.start("counts") as job:
        await job.wait()

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert job.metrics().attempt == 1
    assert sorted(sink.results) == every_count(40, 100)


@pytest.mark.parametrize("incremental", [False, True])
async def test_state_a_hundred_times_larger_than_the_cache_restores_exactly(
    tmp_path: Path, incremental: bool
) -> None:
    fail, sink = FailOnce(), CollectSink[Any]()
    values = numbers(30_000, fail)
    env = counts_job(tmp_path, values, 10_000, sink, incremental=incremental, cache_entries=100)

    async with env.start("counts") as job:
        await job.wait()

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert job.metrics().attempt == 1
    assert sorted(sink.results) == every_count(10_000, 3)
