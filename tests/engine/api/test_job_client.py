from __future__ import annotations

from typing import Any

import anyio

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import JobStatus, SinkContext, StreamEnvironment
from tests.engine.jobs.basic import CallbackSink, EndlessSource


def endless_job(seen: anyio.Event, threshold: int) -> StreamEnvironment:
    received = 0

    def count(context: SinkContext, records: list[Any]) -> None:
        nonlocal received
        received += len(records)
        if received >= threshold:
            seen.set()

    env = StreamEnvironment(parallelism=2)
    env.from_source(EndlessSource(), uid="endless").map(
        lambda x: x + 1, uid="inc"
    ).rebalance().sink_to(CallbackSink(count), uid="count")
    return env


async def test_start_returns_a_client_while_the_job_runs_and_cancel_ends_it() -> None:
    seen = anyio.Event()
    env = endless_job(seen, threshold=10_000)

    with anyio.fail_after(10):
        async with env.start("endless") as job:
            await seen.wait()
            assert job.status is JobStatus.RUNNING
            job.cancel()
            result = await job.wait()

    assert result.status is JobStatus.CANCELED


async def test_metrics_count_records_in_and_out_of_every_subtask() -> None:
    env = StreamEnvironment(parallelism=2)
    env.from_source(CollectionSource(range(1_000)), uid="numbers").rebalance().sink_to(
        CollectSink(), uid="out"
    )

    result = await env.execute("counted")

    sources, sinks = result.metrics.of("numbers"), result.metrics.of("out")
    assert [s.subtask_index for s in sources] == [0, 1]
    assert sum(s.records_out for s in sources) == 1_000
    assert sum(s.records_in for s in sinks) == 1_000
    assert sum(s.records_out for s in sinks) == 1_000


async def test_metrics_are_available_while_the_job_runs() -> None:
    seen = anyio.Event()
    env = endless_job(seen, threshold=5_000)

    with anyio.fail_after(10):
        async with env.start("endless") as job:
            await seen.wait()
            metrics = job.metrics()
            job.cancel()

    assert metrics.job_name == "endless"
    assert sum(s.records_in for s in metrics.of("count")) >= 5_000
    assert {tuple(s.uids) for s in metrics.subtasks} == {("endless", "inc"), ("count",)}


async def test_subtask_time_splits_into_busy_idle_and_backpressured() -> None:
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(10_000)), uid="numbers").sink_to(CollectSink())

    result = await env.execute("timed")

    for subtask in result.metrics.subtasks:
        assert subtask.busy_time >= 0.0
        assert subtask.idle_time >= 0.0
        assert subtask.backpressured_time >= 0.0
        assert subtask.busy_time + subtask.idle_time + subtask.backpressured_time > 0.0
