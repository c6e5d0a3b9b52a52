"""Window joins and co_group as a job author writes them, on small hand-computed inputs.

Orders and payments come from two sources, each with its own watermark strategy and its own
timestamp assigner; records are out of order by less than the strategies' bound, so none is
late at the join and every output below is exact whatever order the join reads its inputs in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    CoGroupFunction,
    DataStream,
    EventTimeSessionWindows,
    FlatJoinFunction,
    GraphError,
    ManualClock,
    SlidingEventTimeWindows,
    StreamEnvironment,
    TimeEvictor,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)
from tests.engine.jobs.async_io import wait_until
from tests.engine.jobs.event_time import WatermarkLog, below
from tests.engine.jobs.joins import (
    MIXED_TIME,
    ORDER_TIME,
    PAYMENT_TIME,
    Order,
    Paid,
    Payment,
    env_per_record,
    order_id,
    paid,
    paid_order,
    split,
    window_pairs,
)
from tests.engine.jobs.savepoints import Topic, TopicSource

ORDERS: list[Order] = [
    ("o1", 1.0, 10),
    ("o2", 3.0, 20),
    ("o1", 12.0, 30),
    ("o3", 14.0, 40),
    ("o1", 8.0, 50),  # below the orders' watermark (9-), in a window still open: joins
]
PAYMENTS: list[Payment] = [
    (2.0, "o1", "p1"),
    (9.5, "o1", "p2"),
    (10.0, "o1", "p3"),  # on a window's start: in [10, 20), not [0, 10)
    (11.0, "o2", "p4"),
    (15.0, "o1", "p5"),
    (10.5, "o3", "p6"),
]
TENS = TumblingEventTimeWindows.of(10.0)


class Job:
    """Orders and payments from two sources of one environment, and a sink for the result."""

    def __init__(
        self, orders: list[Order] = ORDERS, payments: list[Payment] = PAYMENTS, parallelism: int = 1
    ) -> None:
        self.env = env_per_record(parallelism)
        self.sink = CollectSink[Any]()
        self.orders: DataStream[Order] = self.env.from_source(
            CollectionSource(orders), uid="orders", watermark_strategy=ORDER_TIME
        )
        self.payments: DataStream[Payment] = self.env.from_source(
            CollectionSource(payments), uid="payments", watermark_strategy=PAYMENT_TIME
        )

    async def run(self, result: DataStream[Any]) -> Counter[Any]:
        result.sink_to(self.sink, uid="out")
        await self.env.execute("join")
        return Counter(self.sink.results)


async def join(windows: WindowAssigner, fn: Any = paid, job: Job | None = None) -> Counter[Any]:
    job = job or Job()
    joins = job.orders.join(job.payments).where(order_id).equal_to(paid_order).window(windows)
    return await job.run(joins.apply(fn, uid="paid"))


Group = tuple[str, tuple[int, ...], tuple[str, ...]]


class Sides(CoGroupFunction[Order, Payment, Group]):
    """A key's window: (key, its orders' amounts, its payments' codes), either possibly empty."""

    def co_group(self, first: list[Order], second: list[Payment]) -> Iterator[Group]:
        key = first[0][0] if first else second[0][1]
        yield (key, tuple(sorted(o[2] for o in first)), tuple(sorted(p[2] for p in second)))


async def co_group(windows: WindowAssigner, fn: Any = None, job: Job | None = None) -> Counter[Any]:
    job = job or Job()
    groups = job.orders.co_group(job.payments).where(order_id).equal_to(paid_order)
    return await job.run(groups.window(windows).apply(fn or Sides(), uid="sides"))


async def test_a_window_join_emits_every_pair_of_a_keys_window() -> None:
    pairs = await join(TENS)

    assert pairs == Counter(
        [
            ("o1", 10, "p1"),
            ("o1", 10, "p2"),
            ("o1", 50, "p1"),
            ("o1", 50, "p2"),
            ("o1", 30, "p3"),
            ("o1", 30, "p5"),
            ("o3", 40, "p6"),
        ]
    )


async def test_co_group_gives_each_keys_window_both_sides_either_possibly_empty() -> None:
    groups = await co_group(TENS)

    assert groups == Counter(
        [
            ("o1", (10, 50), ("p1", "p2")),
            ("o2", (20,), ()),
            ("o1", (30,), ("p3", "p5")),
            ("o2", (), ("p4",)),
            ("o3", (40,), ("p6",)),
        ]
    )


async def test_a_plain_function_of_two_lists_serves_as_a_co_group_function() -> None:
    def counts(orders: list[Order], payments: list[Payment]) -> list[tuple[int, int]]:
        return [(len(orders), len(payments))]

    groups = await co_group(TENS, counts)

    assert groups == Counter([(2, 2), (1, 0), (1, 2), (0, 1), (1, 1)])


class Every20(FlatJoinFunction[Order, Payment, Paid]):
    """A pair becomes one record per 20 of the order's amount: none, one or many."""

    def join(self, first: Order, second: Payment) -> Iterator[Paid]:
        for _ in range(first[2] // 20):
            yield paid(first, second)


async def test_a_flat_join_function_turns_each_pair_into_none_one_or_many() -> None:
    pairs = await join(TENS, Every20())

    expected = {("o1", 50, "p1"): 2, ("o1", 50, "p2"): 2, ("o1", 30, "p3"): 1}
    assert pairs == Counter({**expected, ("o1", 30, "p5"): 1, ("o3", 40, "p6"): 2})


async def test_a_pair_in_two_sliding_windows_joins_in_each() -> None:
    job = Job(orders=[("a", 7.0, 1)], payments=[(8.0, "a", "x"), (12.0, "a", "y")])

    pairs = await join(SlidingEventTimeWindows.of(10.0, 5.0), job=job)

    # [0, 10) holds 7 and 8; [5, 15) holds 7, 8 and 12; [10, 20) holds 12 alone
    assert pairs == Counter({("a", 1, "x"): 2, ("a", 1, "y"): 1})


async def test_session_windows_merge_over_both_sides_records() -> None:
    orders: list[Order] = [("a", 1.0, 1), ("a", 20.0, 2)]
    payments: list[Payment] = [(8.5, "a", "y"), (4.0, "a", "x")]

    groups = await co_group(EventTimeSessionWindows.with_gap(5.0), job=Job(orders, payments))

    # 1 and 4 make [1, 9); 8.5 extends it to [1, 13.5); 20 is a session of its own
    assert groups == Counter([("a", (1,), ("x", "y")), ("a", (2,), ())])


async def test_a_window_join_at_parallelism_3_pairs_every_key_on_its_subtask() -> None:
    orders = [(f"k{n % 7}", n * 0.5, n) for n in range(300)]
    payments = [(n * 0.5 + 0.25, f"k{n % 5}", f"p{n}") for n in range(300)]

    pairs = await join(TENS, job=Job(orders, payments, parallelism=3))

    assert pairs == window_pairs(orders, payments, 10.0)
    assert sum(pairs.values()) > 0


async def test_an_evictor_removes_records_of_both_sides_before_the_join() -> None:
    orders: list[Order] = [("a", 1.0, 1), ("a", 8.0, 2)]
    payments: list[Payment] = [(2.0, "a", "x"), (9.0, "a", "y")]
    job = Job(orders, payments)
    windowed = job.orders.join(job.payments).where(order_id).equal_to(paid_order).window(TENS)

    pairs = await job.run(windowed.evictor(TimeEvictor.of(2.0)).apply(paid, uid="paid"))

    assert pairs == Counter([("a", 2, "y")])  # only 8 and 9 are within 2 of the newest, 9


async def test_a_late_record_within_the_allowed_lateness_fires_its_window_again() -> None:
    # Flink's window join: a late firing joins the window's records again, every pair.
    topic, log = Topic(partitions=1), WatermarkLog()
    env = env_per_record()
    mixed = env.from_source(TopicSource(topic), uid="records", watermark_strategy=MIXED_TIME)
    orders, payments = split(mixed)
    windows = orders.join(payments).where(order_id).equal_to(paid_order).window(TENS)
    windows.allowed_lateness(20.0).apply(paid, uid="paid").sink_to(log, uid="log")

    def step(records: list[Any]) -> None:
        topic.append(records, partition_of=lambda _: 0)

    with anyio.fail_after(20):
        async with env.start("lateness") as job:
            step([("a", 1.0, 1), (2.0, "a", "p2"), (30.0,)])  # a tick: the watermark to 25-
            await log.wait_for_watermark(below(25.0))
            step([(3.0, "a", "p3"), (40.0,)])  # late, but [0, 10) stays until 30-
            await log.wait_for_watermark(below(35.0))
            step([(4.0, "a", "p4")])  # [0, 10) is gone: dropped
            topic.close()
            result = await job.wait()

    assert Counter(log.records()) == Counter({("a", 1, "p2"): 2, ("a", 1, "p3"): 1})
    assert result.metrics.of("paid")[0].late_records_dropped == {"paid": 1}


async def test_a_processing_time_window_join_fires_on_the_jobs_clock_without_event_time() -> None:
    clock, topic, log = ManualClock(), Topic(partitions=1), WatermarkLog()
    env = StreamEnvironment(clock=clock)
    mixed = env.from_source(TopicSource(topic), uid="records").map(topic.passed)
    orders, payments = split(mixed)
    windows = orders.join(payments).where(order_id).equal_to(paid_order)
    windows.window(TumblingProcessingTimeWindows.of(10.0)).apply(paid, uid="paid").sink_to(
        log, uid="log"
    )

    with anyio.fail_after(20):
        async with env.start("processing time") as job:
            topic.append([("a", 0.0, 1), (0.0, "a", "x"), (0.0, "b", "y")], lambda _: 0)
            # all three in the join's windows of [0, 10) before the clock moves on
            await wait_until(lambda: [s.records_in for s in job.metrics().of("paid")] == [3])
            clock.advance(10.0)
            await log.changes.wait_until(lambda: len(log.records()) == 1)
            topic.close()
            await job.wait()

    assert log.records() == [("a", 1, "x")]


def test_equal_to_before_where_is_refused() -> None:
    job = Job()

    with pytest.raises(GraphError, match=r"join\(\)\.equal_to\(\) keys the right input"):
        job.orders.join(job.payments).equal_to(paid_order)


def test_window_before_both_keys_is_refused() -> None:
    job = Job()

    with pytest.raises(GraphError, match=r"co_group\(\)\.window\(\) needs the join key of both"):
        job.orders.co_group(job.payments).where(order_id).window(TENS)


def test_apply_needs_a_join_function_naming_the_uid() -> None:
    job = Job()
    windowed = job.orders.join(job.payments).where(order_id).equal_to(paid_order).window(TENS)

    with pytest.raises(GraphError, match=r"join 'paid'\.apply\(\) needs a JoinFunction"):
        windowed.apply(42, uid="paid")  # type: ignore[arg-type]


def test_an_event_time_join_needs_each_sides_event_time_naming_the_side() -> None:
    env = StreamEnvironment()
    orders = env.from_source(CollectionSource(ORDERS), uid="orders", watermark_strategy=ORDER_TIME)
    payments = env.from_source(CollectionSource(PAYMENTS), uid="payments")
    windowed = orders.join(payments).where(order_id).equal_to(paid_order).window(TENS)

    with pytest.raises(
        GraphError,
        match=r"join 'paid' in event time needs its right input's event time: the records of "
        r"'payments' carry no timestamps",
    ):
        windowed.apply(paid, uid="paid")


def test_a_window_join_is_one_window_operator_fed_by_both_inputs_keyed() -> None:
    job = Job(parallelism=2)
    windowed = job.orders.join(job.payments).where(order_id).equal_to(paid_order).window(TENS)
    windowed.apply(paid, uid="paid").sink_to(job.sink, uid="out")

    plan = job.env.plan()

    [joins] = [chain for chain in plan.chains if chain.head.uid == "paid"]
    inputs = sorted(
        (edge.upstream.tail.uid, edge.partitioning.value)
        for edge in plan.edges
        if edge.downstream is joins
    )
    assert joins.head.kind.value == "window"
    assert inputs == [("orders-watermarks", "hash"), ("paid-second-input", "hash")]
