"""A subscriber that does not keep up slows the job down to its pace, unless it chose to be
dropped instead (on_overflow="drop")."""

from __future__ import annotations

import anyio
import pytest

from lockgate.connectors import CommittedSink, IngressSource, SubscriberTooSlow
from tests.connectors.service.jobs import service_env, take


async def test_a_slow_subscriber_backpressures_the_job_back_to_the_ingress():
    ingress: IngressSource[int] = IngressSource(capacity=10)
    sink: CommittedSink[int] = CommittedSink()
    slow = sink.subscribe(buffer=5)
    env = service_env()
    env.from_source(ingress, uid="in").sink_to(sink, uid="out")
    sent = anyio.Event()

    async def send_all() -> None:
        await ingress.send_many(range(10, 100))
        sent.set()

    async with env.start("slow") as job, anyio.create_task_group() as group:
        await ingress.send_many(range(5))
        await anyio.wait_all_tasks_blocked()
        await job.trigger_checkpoint()  # its commit fills the buffer
        await ingress.send_many(range(5, 10))
        await anyio.wait_all_tasks_blocked()
        group.start_soon(job.trigger_checkpoint)  # returns once its commit, waiting for room, ran
        group.start_soon(send_all)
        await anyio.wait_all_tasks_blocked()

        assert not sent.is_set()
        assert ingress.statistics().unread == 10  # the job stopped reading
        assert slow.buffered == 5

        seen = await take(slow, 10)
        await sent.wait()
        ingress.close()  # the final checkpoint commits the rest
        seen += await take(slow, 90)
        await job.wait()

    assert seen == list(range(100))


async def test_a_dropped_subscriber_does_not_hold_the_job_back():
    ingress: IngressSource[int] = IngressSource(capacity=10)
    sink: CommittedSink[int] = CommittedSink()
    dropped = sink.subscribe(buffer=5, on_overflow="drop")
    keeping_up = sink.subscribe(buffer=200)
    env = service_env()
    env.from_source(ingress, uid="in").sink_to(sink, uid="out")

    async with env.start("dropped") as job:
        for part in (range(5), range(5, 100)):
            await ingress.send_many(part)
            await anyio.wait_all_tasks_blocked()
            await job.trigger_checkpoint()
        ingress.close()
        await job.wait()

    assert await take(keeping_up, 100) == list(range(100))
    assert await take(dropped, 5) == list(range(5))
    with pytest.raises(SubscriberTooSlow, match="committed sink 'out'"):
        await anext(dropped)
