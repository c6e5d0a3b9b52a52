"""Joins keep their state through failures and rescaling: exactly the pairs, once each.

Orders and payments come through one source, in event-time order, split by ``filter``: no
record is late at the join, so a plain loop gives the exact pairs (``window_pairs``,
``interval_pairs``). Key "z" has its order before the checkpoint (or savepoint) and its
payment after the failure (or restore): its pair comes only from the restored join state.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import DataStream, RestartStrategy, StreamEnvironment, TumblingEventTimeWindows
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.jobs.joins import (
    MIXED_TIME,
    Order,
    PaidPairs,
    Payment,
    interval_pairs,
    order_id,
    paid,
    paid_order,
    split,
    time_of,
    window_pairs,
)
from tests.engine.jobs.savepoints import Topic, TopicSource

KEYS = 7
LOWER, UPPER, SIZE = -2.0, 3.0, 10.0


def orders_and_payments(count: int) -> tuple[list[Order], list[Payment]]:
    orders = [(f"k{n % KEYS}", n * 0.5, n) for n in range(count)]
    payments = [(n * 0.5 + 0.75, f"k{(n * 3) % KEYS}", f"p{n}") for n in range(count)]
    return orders, payments


def in_time_order(*records: list[Any]) -> list[Any]:
    return sorted((r for part in records for r in part), key=time_of)


def joined(kind: str, mixed: DataStream[Any]) -> DataStream[Any]:
    orders, payments = split(mixed)
    if kind == "window join":
        windows = orders.join(payments).where(order_id).equal_to(paid_order)
        return windows.window(TumblingEventTimeWindows.of(SIZE)).apply(paid, uid="paid")
    keyed = orders.key_by(order_id).interval_join(payments.key_by(paid_order))
    return keyed.between(LOWER, UPPER).process(PaidPairs(), uid="paid")


def expected(kind: str, orders: list[Order], payments: list[Payment]) -> Counter[Any]:
    if kind == "window join":
        return window_pairs(orders, payments, SIZE)
    return interval_pairs(orders, payments, LOWER, UPPER)


KINDS = ["window join", "interval join"]


@pytest.mark.parametrize("backend", ["memory", "rocksdb"])
@pytest.mark.parametrize("kind", KINDS)
async def test_a_failure_after_a_checkpoint_restores_the_join_state_exactly(
    kind: str, backend: str, tmp_path: Path
) -> None:
    fail = FailOnce()
    orders, payments = orders_and_payments(400)
    z_order, z_payment = ("z", 101.0, -1), (102.0, "z", "pz")  # in one window, 1 apart
    before = in_time_order(
        [o for o in orders if o[1] < 101.0], [p for p in payments if p[0] < 101.0]
    )
    after = in_time_order(
        [o for o in orders if o[1] >= 101.0], [p for p in payments if p[0] >= 101.0]
    )
    # The checkpoint follows z's order; the failure comes before z's payment, and before the
    # watermark (the newest time less 5) passes z's window or z's cleanup time.
    elements: list[Any] = [*before, z_order, AwaitCheckpoint(), AwaitCheckpoint()]
    elements += [*after[:4], fail, z_payment, *after[4:]]
    assert max(time_of(r) for r in after[:4]) - 5.0 < 101.0 + UPPER
    env = StreamEnvironment(parallelism=2, batch_size=16, auto_watermark_interval=0.0)
    env.enable_checkpointing(0.01)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    env.set_state_backend(backend, path=tmp_path if backend == "rocksdb" else None)
    sink = CollectSink[Any]()
    mixed = env.from_source(
        CollectionSource(elements), uid="records", parallelism=1, watermark_strategy=MIXED_TIME
    )
    joined(kind, mixed).sink_to(sink, uid="out")

    await env.execute("joins")

    assert fail.fired
    everything = expected(kind, [*orders, z_order], [*payments, z_payment])
    assert Counter(sink.results) == everything
    assert everything[("z", -1, "pz")] == 1


def rescaled_job(
    kind: str, topic: Topic, sink: CollectSink[Any], parallelism: int
) -> StreamEnvironment:
    env = StreamEnvironment(
        parallelism=parallelism, max_parallelism=16, batch_size=16, auto_watermark_interval=0.0
    )
    mixed = (
        env.from_source(TopicSource(topic), uid="records", parallelism=1)
        .map(topic.passed, uid="passed")
        .assign_timestamps_and_watermarks(MIXED_TIME, uid="event-time")
    )
    joined(kind, mixed).sink_to(sink, uid="out")
    return env


@pytest.mark.parametrize("kind", KINDS)
async def test_the_join_state_moves_with_its_keys_from_2_to_3_subtasks(
    kind: str, tmp_path: Path
) -> None:
    topic, first, second = Topic(partitions=1), CollectSink[Any](), CollectSink[Any]()
    orders, payments = orders_and_payments(400)
    z_order, z_payment = ("z", 151.0, -1), (152.0, "z", "pz")
    everything = in_time_order(orders, payments)
    cut = next(i for i, record in enumerate(everything) if time_of(record) >= 151.0)
    topic.append([*everything[:cut], z_order], partition_of=lambda _: 0)
    async with rescaled_job(kind, topic, first, parallelism=2).start("before") as job:
        await topic.all_read.wait()
        savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    topic.append([z_payment, *everything[cut:]], partition_of=lambda _: 0)
    topic.close()

    await rescaled_job(kind, topic, second, parallelism=3).execute("after", restore_from=savepoint)

    # The savepoint's pending transaction (the pairs emitted before it) commits again into
    # the restored job's sink, as Flink re-commits it: the second sink holds every pair.
    pairs = expected(kind, [*orders, z_order], [*payments, z_payment])
    assert Counter(second.results) == pairs
    assert pairs[("z", -1, "pz")] == 1
    assert first.results and Counter(first.results) <= Counter(second.results)
