"""Join test builders: orders and payments, their event times, and plain-loop models.

Orders ``(order id, event time, amount)`` and payments ``(event time, order id, code)`` keep
their event time in different places, so each side of a join reads its own with its own
watermark strategy. One source may carry both (``MIXED_TIME`` reads either's time), split
with ``filter``, which keeps event time, and ticks ``(event time,)``, which only move its
watermark on. The models compute what a join emits with a plain
loop, for inputs in which no record is late at the join.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from lockgate.engine import (
    DataStream,
    ProcessJoinContext,
    ProcessJoinFunction,
    StreamEnvironment,
    WatermarkStrategy,
)

Order = tuple[str, float, int]  # (order id, event time, amount)
Payment = tuple[float, str, str]  # (event time, order id, payment code)
Paid = tuple[str, int, str]  # (order id, amount, payment code)

DISORDER = 5.0
ORDER_TIME = WatermarkStrategy.for_bounded_out_of_orderness(DISORDER).with_timestamp_assigner(
    lambda order: order[1]
)
PAYMENT_TIME = WatermarkStrategy.for_bounded_out_of_orderness(DISORDER).with_timestamp_assigner(
    lambda payment: payment[0]
)


def is_order(record: tuple[Any, ...]) -> bool:
    return len(record) == 3 and isinstance(record[0], str)


def is_payment(record: tuple[Any, ...]) -> bool:
    return len(record) == 3 and isinstance(record[0], float)


def time_of(record: tuple[Any, ...]) -> float:
    """The event time of an order, a payment or a tick."""
    return float(record[1] if is_order(record) else record[0])


MIXED_TIME = WatermarkStrategy.for_bounded_out_of_orderness(DISORDER).with_timestamp_assigner(
    time_of
)


def paid(order: Order, payment: Payment) -> Paid:
    """The join function of every test: the order's id and amount, the payment's code."""
    return (order[0], order[2], payment[2])


def order_id(order: Order) -> str:
    return order[0]


def paid_order(payment: Payment) -> str:
    return payment[1]


class PaidWithTimes(ProcessJoinFunction[Order, Payment, tuple[Any, ...]]):
    """An interval join's pair: ``paid`` and the left, right and joined record's times."""

    def process_element(
        self, left: Order, right: Payment, ctx: ProcessJoinContext
    ) -> list[tuple[Any, ...]]:
        times = (ctx.left_timestamp(), ctx.right_timestamp(), ctx.timestamp())
        return [(*paid(left, right), *times)]


class PaidPairs(ProcessJoinFunction[Order, Payment, Paid]):
    """An interval join's pair as ``paid`` gives it."""

    def process_element(self, left: Order, right: Payment, ctx: ProcessJoinContext) -> list[Paid]:
        return [paid(left, right)]


def split(mixed: DataStream[Any]) -> tuple[DataStream[Order], DataStream[Payment]]:
    """The orders and the payments of one stream of both, each through a ``filter``."""
    return mixed.filter(is_order), mixed.filter(is_payment)


def window_pairs(orders: list[Order], payments: list[Payment], size: float) -> Counter[Paid]:
    """What a join on tumbling windows of ``size`` emits: every pair of a key's window."""
    return Counter(
        paid(order, payment)
        for order in orders
        for payment in payments
        if order[0] == payment[1] and order[1] // size == payment[0] // size
    )


def interval_pairs(
    orders: list[Order], payments: list[Payment], lower: float, upper: float
) -> Counter[Paid]:
    """What an interval join ``between(lower, upper)`` emits: every pair within the bounds."""
    return Counter(
        paid(order, payment)
        for order in orders
        for payment in payments
        if order[0] == payment[1] and order[1] + lower <= payment[0] <= order[1] + upper
    )


def env_per_record(parallelism: int = 1) -> StreamEnvironment:
    """An environment with a watermark after every record: each record's lateness is fixed."""
    return StreamEnvironment(parallelism=parallelism, batch_size=1, auto_watermark_interval=0.0)
