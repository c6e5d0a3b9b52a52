from __future__ import annotations

from pathlib import Path

import pytest

from tests.examples.test_examples import load

pytestmark = pytest.mark.asyncio_only(
    reason="the example's HTTP server and client (aiohttp, pyreqwest) run on asyncio only"
)


async def test_every_event_is_enriched_or_set_aside_and_committed_exactly_once(
    tmp_path: Path,
) -> None:
    example = load("async_enrichment")

    # a timeout no call reaches, even on a crowded machine: only a retry would ask twice
    summary = await example.enrich(
        3_000, tmp_path, capacity=1_000, latency=0.05, call_timeout=300.0
    )

    events = example.events(3_000)
    expected = [
        {"event": event, "amount": amount, **example.profile(user)}
        for event, user, amount in events
        if example.is_known(user)
    ]
    assert sorted(summary.enriched, key=lambda record: record["event"]) == expected
    unknown = [event for event in events if not example.is_known(event[1])]
    assert sorted(summary.unknown) == unknown
    assert len(unknown) == 60
    assert summary.requests == 3_000  # an unknown user is asked for once, not retried


async def test_the_service_sees_hundreds_of_requests_at_once_but_never_more_than_capacity(
    tmp_path: Path,
) -> None:
    example = load("async_enrichment")

    # a latency long enough that the client sends a whole wave before the first answer
    summary = await example.enrich(3_000, tmp_path, capacity=1_000, latency=0.5, call_timeout=300.0)

    assert 500 < summary.peak_in_flight <= 1_000
    assert summary.requests == 3_000
