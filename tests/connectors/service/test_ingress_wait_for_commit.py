"""send(wait_for_commit=True) returns once a completed checkpoint covers the record, and raises
IngressNotCommitted when the job's attempt ends first."""

from __future__ import annotations

import anyio
import pytest

from lockgate.connectors import CollectSink, IngressNotCommitted, IngressSource
from lockgate.engine import JobError, StreamEnvironment
from lockgate.engine.testing import FailOnce
from tests.connectors.service.jobs import (
    completed_now,
    send_and_commit,
    service_env,
    wait_until_read,
)


def failing_at(record: int, fail: FailOnce):
    def check(value: int) -> int:
        if value == record:
            fail.maybe_fire()
        return value

    return check


def ingress_job(
    env: StreamEnvironment, ingress: IngressSource[int], fail: FailOnce | None = None
) -> CollectSink[int]:
    sink: CollectSink[int] = CollectSink()
    stream = env.from_source(ingress, uid="in")
    if fail is not None:
        stream = stream.map(failing_at(7, fail), uid="check")
    stream.sink_to(sink, uid="out")
    return sink


async def test_wait_for_commit_returns_only_once_a_completed_checkpoint_covers_the_record():
    ingress: IngressSource[int] = IngressSource()
    env = service_env()
    sink = ingress_job(env, ingress)
    completed_when_returned: list[int] = []

    async with env.start("commit") as job:
        events = job.events()

        async def send() -> None:
            await ingress.send(1, wait_for_commit=True)
            completed_when_returned.extend(await completed_now(events))

        async with anyio.create_task_group() as group:
            group.start_soon(send)
            await wait_until_read(ingress, 1)  # read and passed on; no checkpoint yet
            completed_before = await completed_now(events)
            completed = await job.trigger_checkpoint()
        job.cancel()

    assert completed_before == []
    assert completed.checkpoint_id == 1
    assert completed_when_returned == [1]  # its CheckpointCompleted came before send returned
    assert sink.results == [1]


async def test_wait_for_commit_raises_for_a_record_of_a_failed_attempt():
    ingress: IngressSource[int] = IngressSource()
    fail = FailOnce()
    env = service_env()
    sink = ingress_job(env, ingress, fail)

    async with env.start("commit") as job:
        await send_and_commit(job, ingress, 1)  # the failure comes after a checkpoint
        with (
            anyio.fail_after(10),
            pytest.raises(IngressNotCommitted, match=r"ingress 'in' \(split 'ingress-0'"),
        ):
            await ingress.send(7, wait_for_commit=True)
        await send_and_commit(job, ingress, 2)  # the next attempt runs
        job.cancel()

    assert fail.fired
    assert job.metrics().attempt == 1
    assert sink.results == [1, 7, 2]  # 7 was still held: the next attempt read it


async def test_a_waiting_sender_learns_that_a_job_that_is_not_restarted_failed():
    ingress: IngressSource[int] = IngressSource()
    fail = FailOnce()
    env = StreamEnvironment()
    env.enable_checkpointing(None)  # and no restart strategy: the first failure is the last
    ingress_job(env, ingress, fail)

    with pytest.raises(JobError):
        async with env.start("commit"):
            with anyio.fail_after(10), pytest.raises(IngressNotCommitted):
                await ingress.send(7, wait_for_commit=True)

    assert fail.fired


async def test_send_many_waits_until_every_record_is_covered():
    ingress: IngressSource[int] = IngressSource()
    env = service_env()
    sink = ingress_job(env, ingress)
    completed_when_returned: list[int] = []

    async with env.start("commit") as job:
        events = job.events()

        async def send() -> None:
            await ingress.send_many(range(30), wait_for_commit=True)
            completed_when_returned.extend(await completed_now(events))

        async with anyio.create_task_group() as group:
            group.start_soon(send)
            await wait_until_read(ingress, 30)
            returned_before = list(completed_when_returned)
            await job.trigger_checkpoint()  # covers them all
        job.cancel()

    assert returned_before == []
    assert completed_when_returned == [1]
    assert sink.results == list(range(30))
