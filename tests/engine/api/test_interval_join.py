"""Interval joins as a job author writes them, on small hand-computed inputs.

Orders (left) and payments (right) come from two sources, each with its own watermark
strategy and timestamp assigner, out of order by less than the bound, so no record is late at
the join and every output is exact. Lateness and cleanup are shown on one source of both,
fed step by step: a step starts only once the join's watermark reached the sink.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    GraphError,
    IntervalJoined,
    KeyedStream,
    OutputTag,
    StreamEnvironment,
)
from tests.engine.jobs.event_time import WatermarkLog, below
from tests.engine.jobs.joins import (
    MIXED_TIME,
    ORDER_TIME,
    PAYMENT_TIME,
    Order,
    PaidPairs,
    PaidWithTimes,
    Payment,
    env_per_record,
    order_id,
    paid_order,
    split,
)
from tests.engine.jobs.savepoints import Topic, TopicSource

ORDERS: list[Order] = [("a", 10.0, 1), ("b", 20.0, 2), ("a", 11.0, 3)]
PAYMENTS: list[Payment] = [
    (8.0, "a", "p8"),
    (7.0, "a", "p7"),
    (13.0, "a", "p13"),
    (12.0, "a", "p12"),
    (14.0, "a", "p14"),
    (18.0, "b", "q18"),
    (17.5, "b", "q17.5"),
    (20.0, "b", "q20"),
    (23.0, "b", "q23"),
]


def keyed(
    orders: list[Order] = ORDERS, payments: list[Payment] = PAYMENTS
) -> tuple[StreamEnvironment, KeyedStream[Order, str], KeyedStream[Payment, str]]:
    env = env_per_record()
    left = env.from_source(CollectionSource(orders), uid="orders", watermark_strategy=ORDER_TIME)
    right = env.from_source(
        CollectionSource(payments), uid="payments", watermark_strategy=PAYMENT_TIME
    )
    return env, left.key_by(order_id), right.key_by(paid_order)


async def pairs(lower: float, upper: float, *, exclude: tuple[str, ...] = ()) -> Counter[Any]:
    """(order, amount, payment, the order's time, the payment's, the pair's) per pair."""
    env, orders, payments = keyed()
    joined: IntervalJoined[Order, Payment, str] = orders.interval_join(payments).between(
        lower, upper
    )
    if "lower" in exclude:
        joined = joined.lower_bound_exclusive()
    if "upper" in exclude:
        joined = joined.upper_bound_exclusive()
    sink = CollectSink[Any]()
    joined.process(PaidWithTimes(), uid="paid").sink_to(sink, uid="out")
    await env.execute("interval join")
    return Counter(sink.results)


async def test_payments_from_2_before_to_3_after_an_order_join_it_both_bounds_included() -> None:
    found = await pairs(-2.0, 3.0)

    assert found == Counter(
        [
            ("a", 1, "p8", 10.0, 8.0, 10.0),  # on the lower bound
            ("a", 1, "p12", 10.0, 12.0, 12.0),
            ("a", 1, "p13", 10.0, 13.0, 13.0),  # on the upper bound
            ("a", 3, "p12", 11.0, 12.0, 12.0),
            ("a", 3, "p13", 11.0, 13.0, 13.0),
            ("a", 3, "p14", 11.0, 14.0, 14.0),
            ("b", 2, "q18", 20.0, 18.0, 20.0),
            ("b", 2, "q20", 20.0, 20.0, 20.0),
            ("b", 2, "q23", 20.0, 23.0, 23.0),
        ]
    )


async def test_an_excluded_lower_bound_leaves_out_payments_exactly_on_it() -> None:
    found = await pairs(-2.0, 3.0, exclude=("lower",))

    assert {pair[:3] for pair in found} == {
        ("a", 1, "p12"),
        ("a", 1, "p13"),
        ("a", 3, "p12"),
        ("a", 3, "p13"),
        ("a", 3, "p14"),
        ("b", 2, "q20"),
        ("b", 2, "q23"),
    }


async def test_an_excluded_upper_bound_leaves_out_payments_exactly_on_it() -> None:
    found = await pairs(-2.0, 3.0, exclude=("upper",))

    assert {pair[:3] for pair in found} == {
        ("a", 1, "p8"),
        ("a", 1, "p12"),
        ("a", 3, "p12"),
        ("a", 3, "p13"),
        ("b", 2, "q18"),
        ("b", 2, "q20"),
    }


async def test_both_bounds_excluded_keep_only_the_payments_strictly_between() -> None:
    found = await pairs(-2.0, 3.0, exclude=("lower", "upper"))

    assert found == Counter(
        [
            ("a", 1, "p12", 10.0, 12.0, 12.0),
            ("a", 3, "p12", 11.0, 12.0, 12.0),
            ("a", 3, "p13", 11.0, 13.0, 13.0),
            ("b", 2, "q20", 20.0, 20.0, 20.0),
        ]
    )


async def test_an_interval_wholly_before_the_order_joins_earlier_payments_only() -> None:
    found = await pairs(-5.0, -1.0)

    assert {pair[:3] for pair in found} == {
        ("a", 1, "p7"),
        ("a", 1, "p8"),
        ("a", 3, "p7"),
        ("a", 3, "p8"),
        ("b", 2, "q17.5"),
        ("b", 2, "q18"),
    }


def test_interval_join_needs_the_other_stream_keyed() -> None:
    env, orders, _ = keyed()
    unkeyed = env.from_source(
        CollectionSource(PAYMENTS), uid="more", watermark_strategy=PAYMENT_TIME
    )

    with pytest.raises(GraphError, match=r"interval_join\(\) needs both inputs keyed"):
        orders.interval_join(unkeyed)  # type: ignore[arg-type]


def test_bounds_the_wrong_way_round_are_refused_naming_the_uid() -> None:
    _, orders, payments = keyed()

    with pytest.raises(GraphError, match=r"interval join 'paid': between\(3.0, -2.0\)"):
        orders.interval_join(payments).between(3.0, -2.0).process(PaidPairs(), uid="paid")


def test_an_interval_join_needs_a_process_join_function() -> None:
    _, orders, payments = keyed()

    with pytest.raises(GraphError, match=r"interval join 'paid': process\(\) needs a Process"):
        orders.interval_join(payments).between(0, 1).process(print, uid="paid")  # type: ignore[arg-type]


def test_an_interval_join_needs_each_sides_event_time() -> None:
    env = StreamEnvironment()
    orders = env.from_source(CollectionSource(ORDERS), uid="orders").key_by(order_id)
    payments = env.from_source(
        CollectionSource(PAYMENTS), uid="payments", watermark_strategy=PAYMENT_TIME
    ).key_by(paid_order)

    with pytest.raises(GraphError, match=r"interval join 'paid' in event time needs its left"):
        orders.interval_join(payments).between(0, 1).process(PaidPairs(), uid="paid")


LATE_ORDERS = OutputTag[Order]("late-orders")
LATE_PAYMENTS = OutputTag[Payment]("late-payments")


class Stepped:
    """Orders and payments from one topic, joined between(-2, 3); fed step by step."""

    def __init__(self, *, late_outputs: bool = False) -> None:
        self.topic, self.log = Topic(partitions=1), WatermarkLog()
        self.late_orders, self.late_payments = CollectSink[Any](), CollectSink[Any]()
        self.env = env_per_record()
        mixed = self.env.from_source(
            TopicSource(self.topic), uid="records", watermark_strategy=MIXED_TIME
        )
        orders, payments = split(mixed)
        joined = orders.key_by(order_id).interval_join(payments.key_by(paid_order))
        between = joined.between(-2.0, 3.0)
        if late_outputs:
            between.side_output_left_late_data(LATE_ORDERS)
            between.side_output_right_late_data(LATE_PAYMENTS)
        out = between.process(PaidPairs(), uid="paid")
        out.sink_to(self.log, uid="log")
        if late_outputs:
            out.side_output(LATE_ORDERS).sink_to(self.late_orders, uid="late-orders")
            out.side_output(LATE_PAYMENTS).sink_to(self.late_payments, uid="late-payments")

    async def step(self, records: list[Any], *, watermark: float) -> None:
        """Append ``records``; return once the join's watermark reached ``watermark``."""
        self.topic.append(records, partition_of=lambda _: 0)
        await self.log.wait_for_watermark(watermark)


async def test_records_at_or_below_the_joins_watermark_are_dropped_and_counted() -> None:
    job = Stepped()

    with anyio.fail_after(20):
        async with job.env.start("late") as client:
            await job.step(
                [("a", 10.0, 1), (12.0, "a", "p12"), ("a", 30.0, 2)], watermark=below(25)
            )
            # both would join ("a", 10.0, 1) if they were on time: 25- is past 12.5 and 24
            late = [(12.5, "a", "p12.5"), ("a", 24.0, 3), (31.0, "a", "p31")]
            await job.step(late, watermark=below(25))
            job.topic.close()
            result = await client.wait()

    assert sorted(job.log.records()) == [("a", 1, "p12"), ("a", 2, "p31")]
    (join,) = result.metrics.of("paid")
    assert join.late_records_dropped == {"paid": 2}


async def test_late_records_go_to_each_sides_late_data_side_output() -> None:
    job = Stepped(late_outputs=True)

    with anyio.fail_after(20):
        async with job.env.start("late") as client:
            await job.step([("a", 10.0, 1), ("a", 30.0, 2)], watermark=below(25))
            await job.step([(12.5, "a", "p12.5"), ("a", 24.0, 3)], watermark=below(25))
            job.topic.close()
            result = await client.wait()

    assert (job.late_orders.results, job.late_payments.results) == (
        [("a", 24.0, 3)],
        [(12.5, "a", "p12.5")],
    )
    assert result.metrics.of("paid")[0].late_records_dropped == {"paid": 0}


async def test_the_watermark_cleans_the_joins_state_down_to_nothing_while_it_runs() -> None:
    job = Stepped()
    records = [("a", 10.0, 1), (12.0, "a", "p12"), ("b", 11.0, 2), (9.0, "b", "q9"), ("c", 13.0, 3)]

    with anyio.fail_after(20):
        async with job.env.start("cleanup") as client:
            await job.step(records, watermark=below(8.0))
            held = [await client.query_state("paid", "left-buffer", key) for key in "abc"]
            entries_held = sum(s.entries for s in client.metrics().keyed_state("paid"))
            await job.step([(100.0,)], watermark=below(95.0))  # a tick: only the watermark moves
            left = [await client.query_state("paid", "left-buffer", key) for key in "abc"]
            right = [await client.query_state("paid", "right-buffer", key) for key in "ab"]
            entries_left = sum(s.entries for s in client.metrics().keyed_state("paid"))
            client.cancel()

    assert held == [{10.0: [("a", 10.0, 1)]}, {11.0: [("b", 11.0, 2)]}, {13.0: [("c", 13.0, 3)]}]
    assert entries_held > 0
    assert (left, right, entries_left) == ([{}, {}, {}], [{}, {}], 0)
    assert sorted(job.log.records()) == [("a", 1, "p12"), ("b", 2, "q9")]
