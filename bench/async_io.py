"""Async I/O: 20,000 records through async_map(capacity=1000) calling a local HTTP server.

The server (``http_fixture.serve``, in a process of its own) answers ``GET /item/<n>`` with
``<n>`` after 50 ms. With 1,000 calls in flight the ideal rate is capacity / latency =
20,000 records/s. Clients (``--client``, one or more; default ``lean pyreqwest``):

- ``lean``: ``http_fixture.HttpClient``, HTTP/1.1 keep-alive on asyncio Protocols, a few
  microseconds of event-loop time per request: the client that leaves the engine as the
  thing measured. **The goal is judged with it.**
- ``pyreqwest``: Rust's reqwest; its HTTP work runs on a thread of its own, which must take
  the GIL from the event loop to hand over each answer.
- ``aiohttp``: one ``ClientSession``, all on the event loop.

For each client two contenders, and one without HTTP, timed in interleaved rounds, each
keeping its best:

- ``<client> floor``: the same HTTP calls with no engine (``capacity`` tasks taking the next
  record from a shared iterator): what the client itself manages on this machine.
- ``lockgate + <client>``: ``CollectionSource -> async_map(fetch, capacity=1000) -> sink``,
  a counting sink; for the judged client also ``lockgate + <client> + CollectSink``, the
  same job ending in ``CollectSink`` (exactly-once, as users' jobs end).
- ``lockgate + sleep``: the same job with ``asyncio.sleep(0.05)`` in place of the request:
  the engine's own cost with no client in the way.

Each round also measures CPU time per record: of the event loop's thread, of the whole client
process (its threads included) and of the server process (which reports its own CPU time at
``GET /cpu``), so the output says which side is the limit. ``--serve PORT`` runs only the
server, for a load generator such as ``wrk`` to measure its capacity. Run with ``--help`` for
flags. Every run checks that each record got its own answer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import multiprocessing
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from harness import CountingSink
from http_fixture import HttpClient, free_port, serve

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import StreamEnvironment, run

GOAL = 0.6  # the target: records/s at least 0.6 x capacity / latency
CLIENTS = ("lean", "pyreqwest", "aiohttp")
JUDGED = "lean"  # the client the goal is judged with: the one that costs the engine least


class Fetch(Protocol):
    """The async function: one GET per record, through one client for all records."""

    name: str

    async def __call__(self, record: int) -> int: ...

    async def server_cpu(self) -> float:
        """The server process's CPU time so far, in seconds."""
        ...

    async def close(self) -> None: ...


class LeanFetch:
    """``GET /item/<n>`` through the fixture's ``HttpClient`` (keep-alive, asyncio Protocols)."""

    name = "lean"

    def __init__(self, base: str, capacity: int) -> None:
        address = urlsplit(base)
        assert address.hostname is not None and address.port is not None, base
        self.client = HttpClient(address.hostname, address.port)

    async def __call__(self, record: int) -> int:
        return int(await self.client.get(f"/item/{record}"))

    async def server_cpu(self) -> float:
        return float(await self.client.get("/cpu"))

    async def close(self) -> None:
        await self.client.close()


class PyreqwestFetch:
    """``GET /item/<n>`` through a ``pyreqwest`` client keeping ``capacity`` connections."""

    name = "pyreqwest"

    def __init__(self, base: str, capacity: int) -> None:
        from pyreqwest.client import ClientBuilder

        builder = ClientBuilder().http1_only().max_connections(capacity)
        self.client = builder.pool_max_idle_per_host(capacity).build()
        self.base = base

    async def get(self, path: str) -> str:
        response = await self.client.get(f"{self.base}{path}").build().send()
        return await response.text()

    async def __call__(self, record: int) -> int:
        return int(await self.get(f"/item/{record}"))

    async def server_cpu(self) -> float:
        return float(await self.get("/cpu"))

    async def close(self) -> None:
        await self.client.close()


class AiohttpFetch:
    """``GET /item/<n>`` through one ``aiohttp`` session keeping ``capacity`` connections."""

    name = "aiohttp"

    def __init__(self, base: str, capacity: int) -> None:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=capacity, keepalive_timeout=60)
        self.session = aiohttp.ClientSession(
            connector=connector, skip_auto_headers=("User-Agent",), auto_decompress=False
        )
        self.base = base

    async def get(self, path: str) -> bytes:
        async with self.session.get(f"{self.base}{path}") as response:
            return await response.read()

    async def __call__(self, record: int) -> int:
        return int(await self.get(f"/item/{record}"))

    async def server_cpu(self) -> float:
        return float(await self.get("/cpu"))

    async def close(self) -> None:
        await self.session.close()


class Sleep:
    """The async function without I/O: wait ``latency`` seconds, answer the record."""

    def __init__(self, latency: float) -> None:
        self.latency = latency

    async def __call__(self, record: int) -> int:
        await asyncio.sleep(self.latency)
        return record


async def floor(fetch: Fetch, records: int, capacity: int, busy: float = 0.0) -> int:
    """Call ``fetch`` on every record, ``capacity`` at a time; count the right answers.

    ``busy``: seconds of pure-Python work on the loop before each call, to see how the
    client copes with a loop that has other work to do (``--busy``).
    """
    answers = [-1] * records
    todo = iter(range(records))

    async def worker() -> None:
        for record in todo:
            if busy:
                spin(busy)
            answers[record] = await fetch(record)

    await asyncio.gather(*(worker() for _ in range(min(capacity, records))))
    return sum(1 for record, answer in enumerate(answers) if record == answer)


def spin(seconds: float) -> None:
    """Hold the GIL in Python code for ``seconds``, as per-record work on the loop does."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


async def through_lockgate(
    fn: Callable[[int], Awaitable[int]], records: int, capacity: int, *, collect: bool = False
) -> int:
    """Run the job into a counting sink (or ``CollectSink``); return the right answers' count."""
    env = StreamEnvironment(parallelism=1)
    sink = CountingSink(latest_by=lambda answer: answer)
    collected: CollectSink[int] = CollectSink()
    (
        env.from_source(CollectionSource(range(records)), uid="records")
        .async_map(fn, capacity=capacity, uid="fetch")
        .sink_to(collected if collect else sink, uid="count")
    )
    await env.execute("async-io")
    if collect:
        return len(collected.results) if sorted(collected.results) == list(range(records)) else -1
    return sink.count if sink.latest.keys() == set(range(records)) else -1


@dataclass(frozen=True)
class Round:
    """One timed run: wall seconds, and CPU seconds of the loop thread, client and server."""

    seconds: float
    loop_cpu: float
    client_cpu: float
    server_cpu: float


async def timed(run_once: Callable[[], Awaitable[int]], records: int, fetch: Fetch) -> Round:
    gc.collect()
    server_before = await fetch.server_cpu()
    loop_before, client_before = time.thread_time(), time.process_time()
    started = time.perf_counter()
    answered = await run_once()
    seconds = time.perf_counter() - started
    loop_cpu, client_cpu = time.thread_time() - loop_before, time.process_time() - client_before
    server_cpu = await fetch.server_cpu() - server_before
    if answered != records:
        raise SystemExit(f"a run answered {answered} of {records} records correctly")
    return Round(seconds, loop_cpu, client_cpu, server_cpu)


FETCHES: dict[str, Callable[[str, int], Fetch]] = {
    "lean": LeanFetch,
    "pyreqwest": PyreqwestFetch,
    "aiohttp": AiohttpFetch,
}
SLEEP = "lockgate + sleep (no HTTP)"


def contenders_for(
    fetch: Fetch, args: argparse.Namespace
) -> dict[str, Callable[[], Awaitable[int]]]:
    """The client alone and the job calling it, by label."""
    contenders = {
        f"{fetch.name} floor (no engine)": lambda: floor(fetch, args.records, args.capacity),
        f"lockgate + {fetch.name}": lambda: through_lockgate(fetch, args.records, args.capacity),
    }
    if fetch.name == JUDGED:
        contenders[f"lockgate + {fetch.name} + CollectSink"] = lambda: through_lockgate(
            fetch, args.records, args.capacity, collect=True
        )
    if args.busy:
        contenders[f"{fetch.name} floor + {args.busy:g} us"] = lambda: floor(
            fetch, args.records, args.capacity, args.busy / 1e6
        )
    return contenders


async def measure(args: argparse.Namespace, base: str) -> dict[str, Round]:
    """Time every contender ``args.repeat`` times, interleaved; keep each one's best round."""
    fetches = [FETCHES[client](base, args.capacity) for client in args.client]
    try:
        contenders: dict[str, Callable[[], Awaitable[int]]] = {}
        for fetch in fetches:
            await floor(fetch, args.capacity, args.capacity)  # open the connections once
            contenders |= contenders_for(fetch, args)
        contenders[SLEEP] = lambda: through_lockgate(
            Sleep(args.latency), args.records, args.capacity
        )
        best: dict[str, Round] = {}
        for _ in range(args.repeat):
            for label, contender in contenders.items():
                this = await timed(contender, args.records, fetches[0])
                if label not in best or this.seconds < best[label].seconds:
                    best[label] = this
    finally:
        for fetch in fetches:
            await fetch.close()
    return best


def report(args: argparse.Namespace, best: dict[str, Round]) -> bool:
    """Print rates against the ideal and the client's floor, CPU per record, and the goal."""
    ideal = args.capacity / args.latency
    rates = {label: args.records / one.seconds for label, one in best.items()}
    print(
        f"async I/O, {args.records:,} records, capacity {args.capacity:,}, server latency "
        f"{args.latency * 1000:.0f} ms, best of {args.repeat}"
    )
    print(f"{'ideal (capacity / latency)':<31} {ideal:>10,.0f} rec/s")
    for label, rate in rates.items():
        client = label.split()[2] if label.startswith("lockgate + ") else label.split()[0]
        floor_rate = rates.get(f"{client} floor (no engine)", rate)
        print(
            f"{label:<31} {rate:>10,.0f} rec/s   {rate / ideal:.2f} x ideal   "
            f"{rate / floor_rate:.2f} x floor"
        )
    heading = "CPU per record, us (best round)"
    print(f"{heading:<31} {'loop thread':>11} {'client':>8} {'server':>8}")
    for label, one in best.items():
        loop, client_cpu, server = (
            1e6 * cpu / args.records for cpu in (one.loop_cpu, one.client_cpu, one.server_cpu)
        )
        print(f"{label:<31} {loop:>11.0f} {client_cpu:>8.0f} {server:>8.0f}")
    return all(goal_line(client, rates, ideal) for client in args.client if client == JUDGED)


def goal_line(client: str, rates: dict[str, float], ideal: float) -> bool:
    """Print whether ``lockgate + client`` reached the goal; return whether it did."""
    rate, alone = rates[f"lockgate + {client}"], rates[f"{client} floor (no engine)"]
    met = rate >= GOAL * ideal
    print(f"goal: lockgate + {client} at least {GOAL:.2f} x ideal: {'met' if met else 'NOT met'}")
    if not met and alone < GOAL * ideal:
        print(f"      (the {client} client alone reaches {alone / ideal:.2f} x ideal here)")
    return met


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--capacity", type=int, default=1_000)
    parser.add_argument("--latency", type=float, default=0.05, help="server delay, seconds")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; each keeps its best")
    parser.add_argument(
        "--client",
        nargs="+",
        choices=CLIENTS,
        default=list(CLIENTS[:2]),
        help=f"HTTP clients to measure; the goal is judged with {JUDGED!r}",
    )
    parser.add_argument(
        "--busy",
        type=float,
        default=0.0,
        metavar="US",
        help="also time each client's floor with US microseconds of Python work per call",
    )
    parser.add_argument(
        "--serve", type=int, metavar="PORT", help="only run the server on 127.0.0.1:PORT"
    )
    return parser.parse_args()


def main() -> int:
    args = arguments()
    if args.serve is not None:
        print(f"serving http://127.0.0.1:{args.serve}/item/<n> after {args.latency} s; Ctrl-C ends")
        with contextlib.suppress(KeyboardInterrupt):
            serve(args.serve, args.latency, None)
        return 0
    port = free_port()
    spawn = multiprocessing.get_context("spawn")
    ready = spawn.Event()
    server = spawn.Process(target=serve, args=(port, args.latency, ready), daemon=True)
    server.start()
    try:
        if not ready.wait(30):
            raise SystemExit("the HTTP server did not start within 30 s")
        best = run(measure, args, f"http://127.0.0.1:{port}")
    finally:
        server.terminate()
        server.join()
    report(args, best)
    return 0


if __name__ == "__main__":
    sys.exit(main())
