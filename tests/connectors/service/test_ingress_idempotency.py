"""A record sent again with the same idempotency key within its time to live is reflected once:
across a failure of the attempt, and across a restore, since the keys are kept in checkpoints."""

from __future__ import annotations

from pathlib import Path

import anyio

from lockgate.connectors import CollectSink, IngressSource
from lockgate.engine import ManualClock, StreamEnvironment
from lockgate.engine.testing import FailOnce
from tests.connectors.service.jobs import send_and_commit, send_until_committed, service_env


def failing_at(order: str, fail: FailOnce):
    def check(value: str) -> str:
        if value == order:
            fail.maybe_fire()
        return value

    return check


def orders_job(env: StreamEnvironment, ingress: IngressSource[str]) -> CollectSink[str]:
    sink: CollectSink[str] = CollectSink()
    env.from_source(ingress, uid="orders").sink_to(sink, uid="out")
    return sink


async def test_a_record_retried_with_its_key_after_a_failure_is_reflected_once():
    ingress: IngressSource[str] = IngressSource()
    sink: CollectSink[str] = CollectSink()
    fail = FailOnce()
    env = service_env(3)
    env.enable_checkpointing(0.02)
    env.from_source(ingress, uid="orders").map(failing_at("o5", fail), uid="check").sink_to(
        sink, uid="out"
    )
    orders = [f"o{n}" for n in range(10)]

    async with env.start("orders") as job:
        # o0..o4 return once committed, so the failure at o5 comes after a checkpoint.
        failures = [await send_until_committed(ingress, order, order) for order in orders]
        job.cancel()

    assert fail.fired
    assert failures[5] >= 1  # o5 was sent again: its first attempt's checkpoint never came
    assert sorted(sink.results) == orders  # the retry and the replayed o5 count once


async def test_a_retry_read_after_its_original_returns_once_the_next_checkpoint_completes():
    ingress: IngressSource[str] = IngressSource()
    env = service_env()
    sink = orders_job(env, ingress)

    async with env.start("orders") as job:
        await send_and_commit(job, ingress, "o1", idempotency_key="o1")
        with anyio.fail_after(10):  # the retry, alone in its split, used to wait forever
            await send_and_commit(job, ingress, "o1", idempotency_key="o1")
        job.cancel()

    assert sink.results == ["o1"]
    assert ingress.statistics().held == 0  # the checkpoint covered the retry: let go


async def test_the_keys_survive_a_stop_with_savepoint_and_a_restore(tmp_path: Path):
    first: IngressSource[str] = IngressSource()
    env = service_env()
    sink = orders_job(env, first)
    async with env.start("orders") as job:
        await send_and_commit(job, first, "a", idempotency_key="a")
        savepoint = await job.stop_with_savepoint(str(tmp_path))

    second: IngressSource[str] = IngressSource()  # a new process: only the savepoint remains
    env = service_env(2)
    env.from_source(second, uid="orders").sink_to(sink, uid="out")
    async with env.start("orders", restore_from=savepoint) as job:
        await second.send("a again", idempotency_key="a")
        await second.send("b", idempotency_key="b")
        second.close()
        await job.wait()

    assert sink.results == ["a", "b"]


async def test_a_key_is_forgotten_once_its_time_to_live_is_over():
    clock = ManualClock()
    ingress: IngressSource[str] = IngressSource(idempotency_ttl=60.0)
    env = StreamEnvironment(clock=clock, batch_size=1)
    sink = orders_job(env, ingress)

    async with env.start("orders") as job:
        await ingress.send("first", idempotency_key="k")
        await anyio.wait_all_tasks_blocked()
        clock.advance(59.0)
        await ingress.send("within the ttl", idempotency_key="k")
        await anyio.wait_all_tasks_blocked()
        clock.advance(1.0)
        await ingress.send("after the ttl", idempotency_key="k")
        ingress.close()
        await job.wait()

    assert sink.results == ["first", "after the ttl"]
