"""A flat_map that fans one record out to very many: bounded memory, exactly-once results."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from typing import Any

import anyio.lowlevel

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import RestartStrategy, StreamEnvironment
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.jobs.basic import CallbackSink


async def peak_memory_of_a_fan_out(per_record: int) -> int:
    counted = [0]

    def count(_context: Any, records: list[Any]) -> None:
        counted[0] += len(records)

    env = StreamEnvironment(batch_size=256, channel_capacity=1024)
    (
        env.from_source(CollectionSource([0, 1]), uid="numbers")
        .flat_map(lambda n: ((n, i) for i in range(per_record)), uid="fan-out")
        .sink_to(CallbackSink(count), uid="count")
    )
    tracemalloc.start()
    try:
        await env.execute("fan-out")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert counted[0] == 2 * per_record
    return peak


async def test_a_generator_ten_times_longer_takes_about_the_same_memory() -> None:
    small = await peak_memory_of_a_fan_out(30_000)
    large = await peak_memory_of_a_fan_out(300_000)

    assert large <= small * 1.1


class SlowCollectSink(CollectSink[Any]):
    """Yields the event loop many times per batch: the channels before it stay full."""

    async def write(self, txn: Any, records: list[Any]) -> None:
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        await super().write(txn, records)


async def test_a_failure_amid_fanned_out_output_still_commits_each_record_once() -> None:
    # Unaligned checkpoints are triggered while the fan-out of records 2 and 3 waits for
    # room; the failure comes in the middle of record 3's output. A snapshot taken in the
    # middle of a batch would have lost the rest of it.
    failure = FailOnce()

    def fan_out(n: int) -> Iterator[tuple[int, int]]:
        for i in range(20_000):
            if n == 3 and i == 10_000:
                failure.maybe_fire()
            yield (n, i)

    env = StreamEnvironment(parallelism=1, batch_size=4, channel_capacity=64)
    env.enable_checkpointing(0.01, unaligned=True)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    sink = SlowCollectSink()
    (
        env.from_source(CollectionSource([0, 1, AwaitCheckpoint(), 2, 3, 4]), uid="numbers")
        .flat_map(fan_out, uid="fan-out")
        .key_by(lambda pair: pair[1] % 2)
        .map(lambda pair: pair, uid="pass", parallelism=2)
        .sink_to(sink, uid="out")
    )

    await env.execute("fan-out")

    assert failure.fired
    assert sorted(sink.results) == [(n, i) for n in range(5) for i in range(20_000)]
