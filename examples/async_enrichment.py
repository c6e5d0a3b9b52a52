"""Async enrichment: look up each event's user in an HTTP service, thousands of calls at once.

A local profile service (aiohttp, in this process) answers ``GET /users/<id>`` after 0.5 s,
with 404 for the users it does not know. The job reads purchase events, enriches each with
its user's profile through ``async_map(capacity=2000, timeout=..., retry=...)`` and writes the
enriched events, exactly once, to JSON-lines part files (a ``FileSink``), checkpointing every
0.2 s. While the service is slow the operator keeps up to 2,000 requests in flight and stops
reading new events. Connection errors and timeouts are retried; an unknown user is not: its
event goes to the side output ``UNKNOWN_USERS`` (``on_failure=``), written to a second sink.

Run it with ``python examples/async_enrichment.py [--events N] [--output DIR]``; it prints
what it committed and the most requests the service saw at once. Needs aiohttp (extra
``examples``).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp
import anyio.to_thread
import orjson
from aiohttp import web

from lockgate.connectors import CollectionSource, FileSink
from lockgate.engine import AsyncRetry, OutputTag, StreamEnvironment, run

USERS = 500
COUNTRIES = ("NL", "DE", "FR", "BE", "DK")
TIERS = ("basic", "plus", "gold")

Event = tuple[int, int, int]  # event id, user id, amount in cents

UNKNOWN_USERS = OutputTag[Event]("unknown-users")
"""Where events whose user the service does not know go."""


class UnknownUser(LookupError):
    """The profile service has no such user (HTTP 404): asking again will not help."""


def is_known(user: int) -> bool:
    """Whether the service knows ``user`` (one user in fifty it does not)."""
    return user % 50 != 49


def events(count: int) -> list[Event]:
    """``count`` purchase events over ``USERS`` users."""
    return [(event, event * 7 % USERS, 100 + event % 900) for event in range(count)]


def profile(user: int) -> dict[str, Any]:
    """What the service knows about ``user``."""
    return {"user": user, "country": COUNTRIES[user % 5], "tier": TIERS[user % 3]}


class ProfileService:
    """The HTTP service: answers each request after ``latency`` s; counts concurrent ones."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.in_flight = 0
        self.peak_in_flight = 0
        self.requests = 0

    async def user(self, request: web.Request) -> web.Response:
        self.requests += 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.latency)
        finally:
            self.in_flight -= 1
        user = int(request.match_info["user"])
        if not is_known(user):
            raise web.HTTPNotFound(text=f"no user {user}")
        return web.json_response(profile(user))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        """Serve on a free local port; yield the base URL."""
        app = web.Application()
        app.router.add_get("/users/{user}", self.user)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
        await site.start()
        try:
            host, port = runner.addresses[0][:2]
            yield f"http://{host}:{port}"
        finally:
            await runner.cleanup()


class Enrich:
    """The async function: one profile lookup per event, through a shared client session."""

    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session = session
        self.base = base

    async def __call__(self, event: Event) -> dict[str, Any]:
        event_id, user, amount = event
        async with self.session.get(f"{self.base}/users/{user}") as response:
            if response.status == 404:
                raise UnknownUser(user)
            response.raise_for_status()
            found = await response.json()
        return {"event": event_id, "amount": amount, **found}


class Summary(NamedTuple):
    """What a run committed, and how busy the service was."""

    enriched: list[dict[str, Any]]
    unknown: list[Event]
    requests: int
    peak_in_flight: int


async def enrich(
    count: int,
    output: Path,
    *,
    capacity: int = 2_000,
    latency: float = 0.5,
    call_timeout: float = 10.0,
) -> Summary:
    """Enrich ``count`` events into part files in ``output``; return what was committed.

    A call that takes longer than ``call_timeout`` seconds is retried, so the service may see more
    requests than events; an unknown user's is never retried.
    """
    service = ProfileService(latency)
    sink = FileSink(output / "enriched", format="jsonl")
    unknown = FileSink(output / "unknown-users", format="jsonl")
    async with service.running() as base:
        connector = aiohttp.TCPConnector(limit=capacity)
        async with aiohttp.ClientSession(connector=connector) as session:
            env = StreamEnvironment(parallelism=1)
            env.enable_checkpointing(0.2)
            enriched = env.from_source(CollectionSource(events(count)), uid="purchases").async_map(
                Enrich(session, base),
                capacity=capacity,
                timeout=call_timeout,
                retry=AsyncRetry(
                    attempts=3,
                    initial_backoff=0.05,
                    retry_on=lambda error: not isinstance(error, UnknownUser),
                ),
                on_failure=UNKNOWN_USERS,
                uid="enrich",
            )
            enriched.sink_to(sink, uid="enriched")
            enriched.side_output(UNKNOWN_USERS).sink_to(unknown, uid="unknown-users")
            await env.execute("async-enrichment")
    written = await anyio.to_thread.run_sync(committed, sink)
    rejected = await anyio.to_thread.run_sync(committed, unknown)
    return Summary(
        written, [tuple(event) for event in rejected], service.requests, service.peak_in_flight
    )


def committed(sink: FileSink) -> list[dict[str, Any]]:
    """Every committed record, part file by part file; blocking."""
    return [
        orjson.loads(line)
        for part_file in sink.part_files()
        for line in part_file.read_bytes().splitlines()
    ]


async def main_async(count: int, output: Path | None) -> Summary:
    if output is not None:
        return await enrich(count, output)
    with tempfile.TemporaryDirectory() as folder:
        return await enrich(count, Path(folder))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--output", type=Path, help="keep the part files here")
    args = parser.parse_args(argv)
    summary = run(main_async, args.events, args.output)
    by_tier: dict[str, int] = {}
    for record in summary.enriched:
        by_tier[record["tier"]] = by_tier.get(record["tier"], 0) + record["amount"]
    print(f"enriched and committed {len(summary.enriched):,} of {args.events:,} events")
    print(f"unknown users: {len(summary.unknown):,} events, in the side output")
    print(f"service: {summary.requests:,} requests, at most {summary.peak_in_flight:,} at once")
    for tier, cents in sorted(by_tier.items()):
        print(f"  {tier:<5} {cents / 100:>12,.2f}")


if __name__ == "__main__":
    main()
