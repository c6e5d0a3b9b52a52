"""An ingress takes records only while a job reads it and has room: send waits, send_nowait
raises; no record is lost or repeated by the waiting."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from lockgate.connectors import IngressClosed, IngressFull, IngressSource
from tests.connectors.service.jobs import HeldSink, service_env, wait_until_read


async def test_send_waits_until_a_job_reads_the_ingress():
    ingress: IngressSource[int] = IngressSource(capacity=10)
    sink: HeldSink[int] = HeldSink()
    sink.released.set()
    env = service_env()
    env.from_source(ingress, uid="in").sink_to(sink, uid="out")

    async def send_while_no_job_reads(record: int) -> None:
        sent = anyio.Event()

        async def send() -> None:
            await ingress.send(record)
            sent.set()

        async with anyio.create_task_group() as group:
            group.start_soon(send)
            await anyio.wait_all_tasks_blocked()
            assert not sent.is_set()
            async with env.start("ingress") as job:
                await sent.wait()
                await anyio.wait_all_tasks_blocked()
                job.cancel()

    await send_while_no_job_reads(1)  # before the first job
    await send_while_no_job_reads(2)  # after it, before the next one

    assert sink.results == []  # cancelled before any checkpoint
    assert ingress.statistics().held == 2  # both wait for the next job


def test_send_nowait_raises_ingress_full_while_no_job_reads_the_ingress():
    ingress: IngressSource[int] = IngressSource(capacity=10)

    with pytest.raises(IngressFull, match="no running job reading it"):
        ingress.send_nowait(1)


@pytest.mark.parametrize("parallelism", [1, 3])
async def test_a_slow_job_makes_send_wait_and_send_nowait_raise_and_loses_nothing(parallelism):
    ingress: IngressSource[int] = IngressSource(capacity=8)
    sink: HeldSink[int] = HeldSink()
    env = service_env(parallelism, batch_size=1)
    env.from_source(ingress, uid="in").sink_to(sink, uid="out")
    sent = anyio.Event()

    async def send_all() -> None:
        await ingress.send_many(range(100))
        sent.set()

    async with env.start("ingress") as job, anyio.create_task_group() as group:
        group.start_soon(send_all)
        await anyio.wait_all_tasks_blocked()  # the sink holds the job, the job the sends

        assert not sent.is_set()
        assert ingress.statistics().unread == 8
        with pytest.raises(IngressFull, match="is full: 8 records wait"):
            ingress.send_nowait(100)

        sink.released.set()
        await sent.wait()
        ingress.close()
        await job.wait()

    assert sorted(sink.results) == list(range(100))


async def test_records_of_one_split_arrive_in_the_order_they_were_sent():
    ingress: IngressSource[int] = IngressSource(capacity=4)
    sink: HeldSink[int] = HeldSink()
    sink.released.set()
    env = service_env(batch_size=3)
    env.from_source(ingress, uid="in").sink_to(sink, uid="out")

    async with env.start("ingress") as job:
        for record in range(50):
            await ingress.send(record)
        ingress.close()
        await job.wait()

    assert sink.results == list(range(50))


async def test_close_ends_the_job_and_refuses_more_records():
    ingress: IngressSource[int] = IngressSource()
    sink: HeldSink[int] = HeldSink()
    sink.released.set()
    env = service_env()
    env.from_source(ingress, uid="in").sink_to(sink, uid="out")

    async with env.start("ingress") as job:
        await ingress.send(1)
        ingress.close()
        result = await job.wait()

    assert (result.status.name, sink.results) == ("FINISHED", [1])
    with pytest.raises(IngressClosed, match="was closed"):
        await ingress.send(2)


async def test_a_key_function_keeps_a_keys_records_in_one_split_in_order():
    ingress: IngressSource[tuple[str, int]] = IngressSource(key=lambda record: record[0])
    sink: HeldSink[tuple[str, int]] = HeldSink()
    sink.released.set()
    env = service_env(3)
    env.from_source(ingress, uid="in").sink_to(sink, uid="out")

    async with env.start("ingress") as job:
        await ingress.send_many((key, n) for n in range(20) for key in "abcde")
        ingress.close()
        await job.wait()

    for key in "abcde":
        assert [n for k, n in sink.results if k == key] == list(range(20))


async def test_a_loop_of_sends_gives_the_other_tasks_a_turn_every_64_sends():
    ingress: IngressSource[int] = IngressSource(capacity=1_000)
    env = service_env()
    env.from_source(ingress, uid="in").sink_to(HeldSink(), uid="out")  # reads, never drains
    turns = 0

    async def other_task() -> None:
        nonlocal turns
        while True:
            turns += 1
            await anyio.lowlevel.checkpoint()

    async with env.start("turns") as job, anyio.create_task_group() as group:
        await ingress.send(0)  # a job reads the ingress now
        group.start_soon(other_task)
        before = turns
        for number in range(640):
            await ingress.send(number)
        given = turns - before
        group.cancel_scope.cancel()
        job.cancel()

    assert given >= 9  # 640 sends, a turn every 64th


async def test_sends_that_find_room_do_not_yield_so_the_job_reads_them_together():
    ingress: IngressSource[int] = IngressSource()
    env = service_env()
    env.from_source(ingress, uid="in").sink_to(HeldSink(), uid="out")

    async with env.start("together") as job:
        await ingress.send(0)  # the first send, waiting for the job
        await wait_until_read(ingress, 1)
        for number in range(1, 63):  # sends 2 to 63: the 64th would yield
            await ingress.send(number)
        waiting = ingress.statistics().unread
        job.cancel()

    assert waiting == 62  # not one by one: the job's reader had no turn in between
