from __future__ import annotations

from tests.examples.test_examples import load


async def test_every_order_is_enriched_once_with_its_customers_profile() -> None:
    example = load("order_enrichment")

    enriched = await example.enrich_orders(customers=150, count=6_000)

    by_customer = {profile.customer: profile for profile in example.profiles(150)}
    expected = [
        example.enrich(order, by_customer[order.customer]) for order in example.orders(150, 6_000)
    ]
    assert enriched == sorted(expected)
