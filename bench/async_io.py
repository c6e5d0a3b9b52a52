"""Async I/O: 20,000 records through async_map(capacity=1000) calling a local HTTP server.

The server (aiohttp, in a process of its own, so that it does not share the client's core)
answers every request after 50 ms. With 1,000 calls in flight the ideal rate is
capacity / latency = 20,000 records/s. Three contenders, timed in interleaved rounds, each
keeping its best:

- ``aiohttp floor``: the same HTTP calls with no engine (a semaphore of 1,000 and
  ``asyncio.gather``): what the aiohttp client itself manages on this machine.
- ``lockgate + aiohttp``: ``CollectionSource -> async_map(fetch, capacity=1000) -> sink``.
- ``lockgate + sleep``: the same job with ``asyncio.sleep(0.05)`` in place of the request:
  the engine's own cost with no client in the way.

Run with ``--help`` for flags. Every run checks that each record got its own answer.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import multiprocessing
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from aiohttp import web
from harness import CountingSink

from lockgate.connectors import CollectionSource
from lockgate.engine import StreamEnvironment, run

GOAL = 0.6  # the target: records/s at least 0.6 x capacity / latency


def serve(port: int, latency: float, ready: Any) -> None:
    """Run the HTTP server: ``GET /item/<n>`` answers ``<n>`` after ``latency`` seconds."""

    async def item(request: web.Request) -> web.Response:
        await asyncio.sleep(latency)
        return web.Response(text=request.match_info["n"])

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/item/{n}", item)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, backlog=4096).start()
        ready.set()
        await asyncio.Event().wait()

    run(main)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Fetch:
    """The async function: one GET per record through a shared client session."""

    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session = session
        self.base = base

    async def __call__(self, record: int) -> int:
        async with self.session.get(f"{self.base}/item/{record}") as response:
            return int(await response.text())


class Sleep:
    """The async function without I/O: wait ``latency`` seconds, answer the record."""

    def __init__(self, latency: float) -> None:
        self.latency = latency

    async def __call__(self, record: int) -> int:
        await asyncio.sleep(self.latency)
        return record


async def floor(fetch: Fetch, records: int, capacity: int) -> int:
    limit = asyncio.Semaphore(capacity)

    async def one(record: int) -> int:
        async with limit:
            return await fetch(record)

    answers = await asyncio.gather(*(one(record) for record in range(records)))
    return sum(1 for record, answer in enumerate(answers) if record == answer)


async def through_lockgate(fn: Callable[[int], Awaitable[int]], records: int, capacity: int) -> int:
    env = StreamEnvironment(parallelism=1)
    sink = CountingSink(latest_by=lambda answer: answer)
    (
        env.from_source(CollectionSource(range(records)), uid="records")
        .async_map(fn, capacity=capacity, uid="fetch")
        .sink_to(sink, uid="count")
    )
    await env.execute("async-io")
    return sink.count if len(sink.latest) == records else -1


async def timed(run_once: Callable[[], Awaitable[int]], records: int) -> float:
    gc.collect()
    started = time.perf_counter()
    answered = await run_once()
    seconds = time.perf_counter() - started
    if answered != records:
        raise SystemExit(f"a run answered {answered} of {records} records correctly")
    return seconds


async def measure(args: argparse.Namespace, base: str) -> dict[str, float]:
    connector = aiohttp.TCPConnector(limit=args.capacity)
    async with aiohttp.ClientSession(connector=connector) as session:
        fetch = Fetch(session, base)
        await floor(fetch, args.capacity, args.capacity)  # open the connections once
        contenders: dict[str, Callable[[], Awaitable[int]]] = {
            "aiohttp floor (no engine)": lambda: floor(fetch, args.records, args.capacity),
            "lockgate + aiohttp": lambda: through_lockgate(fetch, args.records, args.capacity),
            "lockgate + sleep (no HTTP)": lambda: through_lockgate(
                Sleep(args.latency), args.records, args.capacity
            ),
        }
        best = dict.fromkeys(contenders, float("inf"))
        for _ in range(args.repeat):
            for label, contender in contenders.items():
                best[label] = min(best[label], await timed(contender, args.records))
    return {label: args.records / seconds for label, seconds in best.items()}


def report(args: argparse.Namespace, rates: dict[str, float]) -> bool:
    ideal = args.capacity / args.latency
    floor_rate = rates["aiohttp floor (no engine)"]
    print(
        f"async I/O, {args.records:,} records, capacity {args.capacity:,}, server latency "
        f"{args.latency * 1000:.0f} ms, best of {args.repeat}"
    )
    print(f"ideal (capacity / latency)      {ideal:>10,.0f} rec/s")
    for label, rate in rates.items():
        print(
            f"{label:<31} {rate:>10,.0f} rec/s   {rate / ideal:.2f} x ideal   "
            f"{rate / floor_rate:.2f} x floor"
        )
    met = rates["lockgate + aiohttp"] >= GOAL * ideal
    print(f"goal: lockgate + aiohttp at least {GOAL:.2f} x ideal: {'met' if met else 'NOT met'}")
    if not met and floor_rate < GOAL * ideal:
        print(f"      (the aiohttp client alone reaches {floor_rate / ideal:.2f} x ideal here)")
    return met


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--capacity", type=int, default=1_000)
    parser.add_argument("--latency", type=float, default=0.05, help="server delay, seconds")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; each keeps its best")
    return parser.parse_args()


def main() -> int:
    args = arguments()
    port = free_port()
    spawn = multiprocessing.get_context("spawn")
    ready = spawn.Event()
    server = spawn.Process(target=serve, args=(port, args.latency, ready), daemon=True)
    server.start()
    try:
        if not ready.wait(30):
            raise SystemExit("the HTTP server did not start within 30 s")
        rates = run(measure, args, f"http://127.0.0.1:{port}")
    finally:
        server.terminate()
        server.join()
    report(args, rates)
    return 0


if __name__ == "__main__":
    sys.exit(main())
