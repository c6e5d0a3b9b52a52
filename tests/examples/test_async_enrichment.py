from __future__ import annotations

from pathlib import Path

from .test_examples import load


async def test_every_event_is_enriched_and_committed_exactly_once(tmp_path: Path) -> None:
    example = load("async_enrichment")

    summary = await example.enrich(3_000, tmp_path, capacity=1_000, latency=0.05)

    expected = [
        {"event": event, "amount": amount, **example.profile(user)}
        for event, user, amount in example.events(3_000)
    ]
    assert sorted(summary.enriched, key=lambda record: record["event"]) == expected
    assert len(summary.enriched) == 3_000


async def test_the_service_sees_hundreds_of_requests_at_once_but_never_more_than_capacity(
    tmp_path: Path,
) -> None:
    example = load("async_enrichment")

    # a latency long enough that the client sends a whole wave before the first answer
    summary = await example.enrich(3_000, tmp_path, capacity=1_000, latency=0.5)

    assert 500 < summary.peak_in_flight <= 1_000
    assert summary.requests == 3_000
