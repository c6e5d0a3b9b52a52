from __future__ import annotations

import tracemalloc
from typing import Any

import anyio

from lockgate.connectors import CollectionSource
from lockgate.engine import JobMetrics, SinkContext, StreamEnvironment
from tests.engine.jobs.basic import CallbackSink

BATCH = 128
CAPACITY = 512


def slow_job(records: int, on_write: Any) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, batch_size=BATCH, channel_capacity=CAPACITY)
    (
        env.from_source(CollectionSource(range(records)), uid="fast", parallelism=1)
        .map(lambda x: x * 2, uid="double", parallelism=1)
        .key_by(lambda x: x % 100)
        .reduce(lambda a, b: b, uid="latest")
        .rebalance()
        .sink_to(CallbackSink(on_write, pause=0.0005), uid="slow", parallelism=2)
    )
    return env


def in_flight_bound(metrics: JobMetrics) -> int:
    """Channels at capacity, plus what each subtask may hold: a batch in hand and partial
    output batches (one per output channel)."""
    held = sum(BATCH * (1 + 2) for _ in metrics.subtasks)
    return metrics.channel_capacity + held


async def test_records_inside_a_backpressured_job_never_exceed_its_channel_capacity() -> None:
    peaks: list[int] = []
    written = 0
    job_ref: list[Any] = []

    def observe(context: SinkContext, records: list[Any]) -> None:
        nonlocal written
        written += len(records)
        metrics = job_ref[0].metrics()
        source = metrics.of("fast")[0]
        peaks.append(source.records_out - written)
        assert metrics.records_buffered <= metrics.channel_capacity + sum(
            s.output_buffered for s in metrics.subtasks
        )

    env = slow_job(200_000, observe)
    with anyio.fail_after(60):
        async with env.start("backpressure") as job:
            job_ref.append(job)
            result = await job.wait()

    bound = in_flight_bound(result.metrics)
    assert written == 200_000
    assert max(peaks) <= bound
    assert max(peaks) >= result.metrics.channel_capacity // 2  # the channels did fill up
    assert result.metrics.of("fast")[0].backpressured_time > 0.0


async def test_every_channel_stays_within_its_capacity() -> None:
    env = slow_job(50_000, lambda context, records: None)

    result = await env.execute("bounded")

    for subtask in result.metrics.subtasks:
        assert subtask.input_buffered <= subtask.input_capacity


async def peak_traced_memory(records: int) -> int:
    env = slow_job(records, lambda context, records: None)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        await env.execute("memory")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


async def test_peak_memory_does_not_grow_with_the_number_of_records() -> None:
    await peak_traced_memory(10_000)  # warm caches: imports, code objects, loop internals

    small = await peak_traced_memory(100_000)
    large = await peak_traced_memory(1_000_000)

    assert large <= small * 1.10, f"peak {large} bytes for 1M records vs {small} for 100k"
