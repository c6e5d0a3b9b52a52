"""An ingress holds what its job read until a completed checkpoint covers it, so an attempt
restarted after a failure reads again exactly the records after its checkpoint."""

from __future__ import annotations

import anyio
import pytest

from lockgate.connectors import CollectSink, IngressSource
from lockgate.engine import StreamEnvironment
from lockgate.engine.testing import FailOnce
from tests.connectors.service.jobs import service_env


def failing_at(record: int, fail: FailOnce):
    def check(value: int) -> int:
        if value == record:
            fail.maybe_fire()
        return value

    return check


@pytest.mark.parametrize("parallelism", [1, 3])
async def test_records_after_the_checkpoint_are_read_once_more_after_a_failure(parallelism):
    ingress: IngressSource[int] = IngressSource(capacity=1000)
    sink: CollectSink[int] = CollectSink()
    fail = FailOnce()
    env = service_env(parallelism)
    env.from_source(ingress, uid="in").map(failing_at(150, fail), uid="check").sink_to(
        sink, uid="out"
    )

    async with env.start("ingress") as job:
        await ingress.send_many(range(100))
        completed = await job.trigger_checkpoint()
        await ingress.send_many(range(100, 200))
        ingress.close()
        await job.wait()

    assert fail.fired and completed.checkpoint_id >= 1
    assert job.metrics().attempt == 1
    assert sorted(sink.results) == list(range(200))


async def test_a_failure_before_any_checkpoint_reads_every_record_again():
    ingress: IngressSource[int] = IngressSource()
    sink: CollectSink[int] = CollectSink()
    fail = FailOnce()
    env = service_env()
    env.from_source(ingress, uid="in").map(failing_at(30, fail), uid="check").sink_to(
        sink, uid="out"
    )

    async with env.start("ingress") as job:
        await ingress.send_many(range(50))
        ingress.close()
        await job.wait()

    assert fail.fired
    assert sink.results == list(range(50))


async def test_a_covered_record_is_no_longer_held():
    ingress: IngressSource[int] = IngressSource()
    env = service_env()
    env.from_source(ingress, uid="in").sink_to(CollectSink(), uid="out")

    async with env.start("ingress") as job:
        await ingress.send_many(range(20))
        await anyio.wait_all_tasks_blocked()  # the job read and passed on every record
        held_before = ingress.statistics().held
        await job.trigger_checkpoint()
        await anyio.wait_all_tasks_blocked()  # the source heard that the checkpoint completed
        held_after = ingress.statistics().held
        job.cancel()

    assert (held_before, held_after) == (20, 0)


async def test_without_checkpointing_a_record_is_let_go_once_read():
    ingress: IngressSource[int] = IngressSource()
    sink: CollectSink[int] = CollectSink()
    env = StreamEnvironment(batch_size=10, buffer_timeout=0.01)
    env.from_source(ingress, uid="in").sink_to(sink, uid="out")

    async with env.start("ingress") as job:
        await ingress.send_many(range(20))
        await anyio.wait_all_tasks_blocked()
        held = ingress.statistics().held
        ingress.close()
        await job.wait()

    assert held == 0
    assert sink.results == list(range(20))
