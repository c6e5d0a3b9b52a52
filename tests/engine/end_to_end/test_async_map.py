"""async_map: bounded concurrency, backpressure, result order, barriers, end of input."""

from __future__ import annotations

import random
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import JobStatus, StreamEnvironment
from tests.engine.jobs.async_io import Changes, HeldCalls, LoggingSink, in_flight_state, wait_until


def held_job(
    records: int, calls: HeldCalls, sink: Any, *, capacity: int, ordered: bool = True
) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=1, batch_size=16, channel_capacity=64)
    (
        env.from_source(CollectionSource(range(records)), uid="numbers")
        .async_map(calls, capacity=capacity, ordered=ordered, uid="calls")
        .sink_to(sink, uid="out")
    )
    return env


async def release_in_random_order(calls: HeldCalls, total: int, seed: int) -> None:
    shuffle = random.Random(seed)
    while len(calls.released) < total:
        await calls.changes.wait_until(lambda: bool(calls.waiting))
        calls.release(shuffle.choice(calls.waiting))


async def test_calls_in_flight_never_exceed_the_capacity() -> None:
    calls = HeldCalls(Changes())
    env = held_job(500, calls, CollectSink(), capacity=25)

    async with env.start("capacity") as job:
        await calls.wait_started(25)
        await release_in_random_order(calls, 500, seed=3)
        await job.wait()

    assert calls.peak == 25


async def test_the_upstream_stops_while_calls_are_blocked_and_resumes_when_released() -> None:
    changes, emitted = Changes(), [0]
    calls = HeldCalls(changes)
    sink = CollectSink()

    def count(record: int) -> int:
        emitted[0] += 1
        return record

    env = StreamEnvironment(parallelism=1, batch_size=16, channel_capacity=64)
    (
        env.from_source(CollectionSource(range(20_000)), uid="numbers")
        .map(count, uid="counted")
        .async_map(calls, capacity=50, uid="calls", parallelism=2)
        .sink_to(sink, uid="out", parallelism=2)
    )
    async with env.start("backpressure") as job:
        await calls.wait_started(100)
        await wait_until(lambda: sum(s.input_buffered for s in job.metrics().of("calls")) >= 96)
        for _ in range(1_000):  # let the source run on, if nothing stopped it
            await anyio.lowlevel.checkpoint()
        stalled_at = emitted[0]
        calls.open()
        await job.wait()

    # two subtasks: 50 in flight + a batch of backlog each, two full channels, the source's
    # output buffers and the batch it was sending
    assert stalled_at <= 2 * (50 + 16) + 2 * 64 + 2 * 16 + 16
    assert sorted(sink.results) == list(range(20_000))


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_ordered_results_keep_the_input_order_when_calls_complete_in_random_order(
    seed: int,
) -> None:
    calls = HeldCalls(Changes(), result=lambda r: r * 10)
    sink = CollectSink()
    env = held_job(300, calls, sink, capacity=40)

    async with env.start("ordered") as job:
        await release_in_random_order(calls, 300, seed)
        await job.wait()

    assert calls.released != sorted(calls.released)
    assert sink.results == [r * 10 for r in range(300)]


async def test_unordered_results_come_out_in_the_order_calls_complete() -> None:
    changes = Changes()
    calls, sink = HeldCalls(changes), LoggingSink(changes)
    env = held_job(6, calls, sink, capacity=6, ordered=False)
    order = [4, 1, 5, 0, 3, 2]

    async with env.start("unordered") as job:
        await calls.wait_started(6)
        for record in order:
            calls.release(record)
            await sink.wait_logged(record)
        await job.wait()

    assert sink.records == order


async def test_unordered_mode_emits_completed_results_before_a_barrier_and_keeps_the_rest() -> None:
    changes = Changes()
    calls, sink = HeldCalls(changes), LoggingSink(changes)
    env = held_job(10, calls, sink, capacity=10, ordered=False)

    async with env.start("unordered-barrier") as job:
        await calls.wait_started(10)
        for record in (7, 3):  # one by one: calls released together resume in any order
            calls.release(record)
            await sink.wait_logged(record)
        checkpoint = await job.trigger_checkpoint()
        kept = await in_flight_state(env, checkpoint, "calls")
        for record in (0, 9, 1, 2, 4, 5, 6, 8):
            calls.release(record)
            await sink.wait_logged(record)
        await job.wait()

    barrier = sink.log.index(("barrier", checkpoint.checkpoint_id))
    assert sink.log[:barrier] == [7, 3]
    assert sink.log[barrier + 1 : barrier + 9] == [0, 9, 1, 2, 4, 5, 6, 8]
    assert kept == [[0, 1, 2, 4, 5, 6, 8, 9]]


async def test_ordered_mode_emits_the_completed_prefix_before_a_barrier_and_keeps_the_rest() -> (
    None
):
    changes = Changes()
    calls, sink = HeldCalls(changes), LoggingSink(changes)
    env = held_job(5, calls, sink, capacity=5)

    async with env.start("ordered-barrier") as job:
        await calls.wait_started(5)
        calls.release(0, 1, 3)
        await sink.wait_logged(0, 1)
        checkpoint = await job.trigger_checkpoint()
        kept = await in_flight_state(env, checkpoint, "calls")
        calls.release(4, 2)
        await job.wait()

    assert sink.log[:6] == [0, 1, ("barrier", checkpoint.checkpoint_id), 2, 3, 4]
    assert kept == [[2, 3, 4]]


async def test_the_end_of_input_waits_for_every_call_in_flight() -> None:
    changes = Changes()
    calls, sink = HeldCalls(changes), LoggingSink(changes)
    env = held_job(40, calls, sink, capacity=40, ordered=False)

    async with env.start("end") as job:
        await calls.wait_started(40)
        await release_in_random_order(calls, 40, seed=5)
        await job.wait()

    assert sink.log.index("finish") == 40
    assert sorted(sink.records) == list(range(40))


async def test_a_checkpoint_completes_while_every_call_is_blocked() -> None:
    calls = HeldCalls(Changes())
    env = held_job(200, calls, CollectSink(), capacity=20)

    async with env.start("full") as job:
        await calls.wait_started(20)
        with anyio.fail_after(10):
            checkpoint = await job.trigger_checkpoint()
        kept = await in_flight_state(env, checkpoint, "calls")
        (operator,) = job.metrics().async_io("calls")
        calls.open()
        await job.wait()

    assert (operator.in_flight, operator.queued) == (20, 20)
    assert kept == [list(range(operator.queued + operator.backlog))]


async def test_a_job_whose_calls_are_all_blocked_can_be_cancelled() -> None:
    calls = HeldCalls(Changes())
    env = held_job(200, calls, CollectSink(), capacity=20)

    async with env.start("cancel") as job:
        await calls.wait_started(20)
        job.cancel()
        with anyio.fail_after(10):
            result = await job.wait()

    assert result.status is JobStatus.CANCELED
    assert calls.active == 0


async def test_two_chained_async_maps_compose_in_order() -> None:
    async def add_one(record: int) -> int:
        await anyio.lowlevel.checkpoint()
        return record + 1

    async def double(record: int) -> int:
        for _ in range(record % 3):
            await anyio.lowlevel.checkpoint()
        return record * 2

    env = StreamEnvironment(parallelism=2, batch_size=32)
    env.enable_checkpointing(0.005)
    sink = CollectSink()
    (
        env.from_source(CollectionSource(range(3_000)), uid="numbers")
        .async_map(add_one, capacity=7, uid="add-one")
        .async_map(double, capacity=5, uid="double")
        .sink_to(sink, uid="out")
    )

    await env.execute("two-async")

    assert env.plan().describe() == "chain 0 x2: numbers -> add-one -> double -> out"
    first = [r for r in sink.results if r <= 3_000]  # subtask 0 read 0..1499
    second = [r for r in sink.results if r > 3_000]
    assert first == [2 * (r + 1) for r in range(1_500)]
    assert second == [2 * (r + 1) for r in range(1_500, 3_000)]


async def test_a_checkpoint_reaches_a_subtask_whose_input_ended_while_calls_are_in_flight() -> None:
    calls = HeldCalls(Changes())
    env = StreamEnvironment(parallelism=2)
    (
        env.from_source(CollectionSource(range(40)), uid="numbers", parallelism=1)
        .async_map(calls, capacity=40, uid="calls")
        .sink_to(CollectSink(), uid="out")
    )

    async with env.start("input-ended") as job:
        await calls.wait_started(40)
        with anyio.fail_after(10):
            checkpoint = await job.trigger_checkpoint()
        kept = await in_flight_state(env, checkpoint, "calls")
        calls.open()
        await job.wait()

    assert [len(part) for part in kept] == [20, 20]
