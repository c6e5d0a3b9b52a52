"""The embedding connectors under ProcessExecutor: records sent in the driving process reach
the workers' subtasks, and what they commit reaches the objects in the driving process."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import anyio

from lockgate.connectors import CollectSink, CommittedSink, IngressSource
from lockgate.engine import ProcessExecutor, StreamEnvironment
from lockgate.engine.testing import FailOnce
from tests.engine.runtime.executors.jobs import Arrivals, file_checkpointed_env


def triggered_env(tmp_path: Path) -> StreamEnvironment:
    """Checkpoints only when the test triggers them, so it knows what each one covers."""
    env = file_checkpointed_env(tmp_path)
    env.enable_checkpointing(None)
    return env


def failing_at(record: int, fail: FailOnce):  # type: ignore[no-untyped-def]
    def check(value: int) -> int:
        if value == record:
            fail.maybe_fire()
        return value

    return check


async def test_records_sent_in_the_driver_are_read_in_workers_exactly_once_across_a_failure(
    tmp_path: Path,
) -> None:
    ingress, sink, fail = IngressSource[int](capacity=1_000), CollectSink[int](), FailOnce()
    env = triggered_env(tmp_path)
    env.from_source(ingress, uid="in").map(failing_at(150, fail), uid="check").sink_to(
        sink, uid="out"
    )

    with anyio.fail_after(60):
        async with env.start("ingress", executor=ProcessExecutor(workers=2)) as job:
            await ingress.send_many(range(100), wait_for_commit=False)
            completed = await job.trigger_checkpoint()
            await ingress.send_many(range(100, 200))
            ingress.close()
            await job.wait()

    assert fail.fired and completed.checkpoint_id >= 1
    assert job.metrics().attempt == 1
    assert sorted(sink.results) == list(range(200))
    assert ingress.statistics().reading == 0


async def test_a_send_waiting_for_its_commit_returns_once_a_checkpoint_covers_it(
    tmp_path: Path,
) -> None:
    ingress, results, arrivals = IngressSource[str](), CommittedSink[str](), Arrivals()
    env = triggered_env(tmp_path)
    env.from_source(ingress, uid="in").map(arrivals, uid="arrivals").map(
        str.upper, uid="upper"
    ).sink_to(results, uid="out")
    subscription = results.subscribe()

    with anyio.fail_after(60):
        async with env.start("orders", executor=ProcessExecutor(workers=2)) as job:
            async with anyio.create_task_group() as group:
                group.start_soon(partial(ingress.send, "order-1", wait_for_commit=True))
                await arrivals.wait(1)  # a worker's subtask read it
                await job.trigger_checkpoint()
            committed = await anext(subscription)
            job.cancel()

    assert committed == "ORDER-1"
    assert results.statistics().committed == 1
