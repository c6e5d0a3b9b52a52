"""Orders joined with customer profiles: two connected streams, keyed state both inputs share.

Orders ``(order_id, customer, amount)`` and profiles ``(customer, country, tier)`` come from
two sources with no order between them: an order may arrive before its customer's profile.
``stream.connect(other).key_by(...)`` sends both of a customer's to the same subtask, where a
``KeyedCoProcessFunction`` keeps the profile in keyed state, enriches each order with it, and
keeps the orders that came first until the profile arrives. The job checkpoints every 0.1 s
and writes to a transactional ``CollectSink``: each order is emitted once, enriched, whatever
the order in which the two inputs arrive.

Run it with ``python examples/order_enrichment.py [--customers N] [--orders N]``; it prints
the revenue per country and tier.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    KeyedCoProcessFunction,
    ListStateDescriptor,
    ProcessContext,
    RuntimeContext,
    StreamEnvironment,
    ValueStateDescriptor,
    run,
)

COUNTRIES = ("DE", "FR", "NL", "PL")
TIERS = ("basic", "silver", "gold")


class Order(NamedTuple):
    """One order of a customer."""

    order_id: int
    customer: int
    amount: float


class Profile(NamedTuple):
    """What the shop knows of a customer."""

    customer: int
    country: str
    tier: str


class EnrichedOrder(NamedTuple):
    """An order with its customer's country and tier."""

    order_id: int
    customer: int
    amount: float
    country: str
    tier: str


def orders(customers: int, count: int, *, seed: int = 5) -> list[Order]:
    """``count`` orders of random customers, amounts with two decimals."""
    draw = random.Random(seed)
    return [
        Order(i, draw.randrange(customers), draw.randrange(500, 50_000) / 100) for i in range(count)
    ]


def profiles(customers: int, *, seed: int = 6) -> list[Profile]:
    """One profile per customer, for customers in a random order."""
    draw = random.Random(seed)
    known = [
        Profile(customer, draw.choice(COUNTRIES), draw.choice(TIERS))
        for customer in range(customers)
    ]
    draw.shuffle(known)
    return known


class JoinProfiles(KeyedCoProcessFunction[int, Order, Profile, EnrichedOrder]):
    """Per customer: the profile in keyed state; the orders that came before it wait."""

    def open(self, context: RuntimeContext) -> None:
        self.profile = context.get_state(ValueStateDescriptor[Profile]("profile"))
        self.waiting = context.get_state(ListStateDescriptor[Order]("waiting"))

    def process_element1(self, value: Order, ctx: ProcessContext[int]) -> Iterator[EnrichedOrder]:
        profile = self.profile.value()
        if profile is None:
            self.waiting.add(value)
            return
        yield enrich(value, profile)

    def process_element2(self, value: Profile, ctx: ProcessContext[int]) -> Iterator[EnrichedOrder]:
        self.profile.update(value)
        for order in self.waiting.get():
            yield enrich(order, value)
        self.waiting.clear()


def enrich(order: Order, profile: Profile) -> EnrichedOrder:
    """The order with what its customer's profile says."""
    return EnrichedOrder(*order, profile.country, profile.tier)


async def enrich_orders(customers: int, count: int) -> list[EnrichedOrder]:
    """Run the job; return the committed enriched orders, by order id."""
    env = StreamEnvironment(parallelism=2, batch_size=128)
    env.enable_checkpointing(0.1)
    sink = CollectSink[EnrichedOrder]()
    (
        env.from_source(CollectionSource(orders(customers, count)), uid="orders")
        .connect(env.from_source(CollectionSource(profiles(customers)), uid="profiles"))
        .key_by(lambda order: order.customer, lambda profile: profile.customer)
        .process(JoinProfiles(), uid="join-profiles")
        .sink_to(sink, uid="enriched-orders")
    )
    await env.execute("order-enrichment")
    return sorted(sink.results)


def revenue(enriched: Sequence[EnrichedOrder]) -> Counter[tuple[str, str]]:
    """Revenue in cents per (country, tier)."""
    totals: Counter[tuple[str, str]] = Counter()
    for order in enriched:
        totals[(order.country, order.tier)] += round(order.amount * 100)
    return totals


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=int, default=200)
    parser.add_argument("--orders", type=int, default=20_000)
    args = parser.parse_args(argv)
    enriched = run(enrich_orders, args.customers, args.orders)
    print(f"{len(enriched):,} orders of {args.customers} customers, enriched")
    for (country, tier), cents in sorted(revenue(enriched).items()):
        print(f"  {country} {tier:<6} {cents / 100:>12,.2f}")


if __name__ == "__main__":
    main()
