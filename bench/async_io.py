"""Async I/O: 20,000 records through async_map(capacity=1000) calling a local HTTP server.

The server answers ``GET /item/<n>`` with ``<n>`` after 50 ms. It is a minimal HTTP/1.1
keep-alive responder on asyncio Protocols (uvloop), in a process of its own so that it does not
share the client's core: a fixture that costs little per request, so that the client side is
what gets measured. With 1,000 calls in flight the ideal rate is capacity / latency =
20,000 records/s. The client is ``pyreqwest`` (default: Rust's reqwest, whose HTTP work runs
on a thread of its own) or ``aiohttp`` (``--client aiohttp``, all on the event loop). Three
contenders, timed in interleaved rounds, each keeping its best:

- ``<client> floor``: the same HTTP calls with no engine (``capacity`` tasks taking the next
  record from a shared iterator): what the client itself manages on this machine.
- ``lockgate + <client>``: ``CollectionSource -> async_map(fetch, capacity=1000) -> sink``.
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
import collections
import contextlib
import gc
import multiprocessing
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from harness import CountingSink

from lockgate.connectors import CollectionSource
from lockgate.engine import StreamEnvironment, run

GOAL = 0.6  # the target: records/s at least 0.6 x capacity / latency
CLIENTS = ("pyreqwest", "aiohttp")

OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%b"
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"


def answer(request_line: bytes) -> bytes:
    """The response to one request line: ``<n>`` for ``/item/<n>``, the CPU time for ``/cpu``."""
    parts = request_line.split(b" ")
    path = parts[1] if len(parts) == 3 else b""
    if path.startswith(b"/item/") and path[6:].isdigit():
        body = path[6:]
    elif path == b"/cpu":
        body = repr(time.process_time()).encode()
    else:
        return NOT_FOUND
    return OK % (len(body), body)


class Responder(asyncio.Protocol):
    """One keep-alive connection: answers each request ``latency`` seconds after it arrived.

    Requests have no body (GET). Pipelined requests are answered in order: each timer sends the
    oldest answer not sent yet, and all timers have the same delay.
    """

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.loop = asyncio.get_running_loop()
        self.transport: Any = None  # uvloop's transports do not subclass asyncio.Transport
        self.buffer = b""
        self.answers: collections.deque[bytes] = collections.deque()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer + data if self.buffer else data
        start = 0
        while (end := buffer.find(b"\r\n\r\n", start)) >= 0:
            self.answers.append(answer(buffer[start : buffer.find(b"\r\n", start)]))
            self.loop.call_later(self.latency, self.send_oldest)
            start = end + 4
        self.buffer = buffer[start:]

    def send_oldest(self) -> None:
        response = self.answers.popleft()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(response)


def serve(port: int, latency: float, ready: Any) -> None:
    """Run the HTTP server on 127.0.0.1:``port`` (uvloop when installed) until killed."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        await loop.create_server(lambda: Responder(latency), "127.0.0.1", port, backlog=4096)
        if ready is not None:
            ready.set()
        await asyncio.Event().wait()

    run(main)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Fetch(Protocol):
    """The async function: one GET per record, through one client for all records."""

    name: str

    async def __call__(self, record: int) -> int: ...

    async def server_cpu(self) -> float:
        """The server process's CPU time so far, in seconds."""
        ...

    async def close(self) -> None: ...


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


async def floor(fetch: Fetch, records: int, capacity: int) -> int:
    """Call ``fetch`` on every record, ``capacity`` at a time; count the right answers."""
    answers = [-1] * records
    todo = iter(range(records))

    async def worker() -> None:
        for record in todo:
            answers[record] = await fetch(record)

    await asyncio.gather(*(worker() for _ in range(min(capacity, records))))
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


def make_fetch(client: str, base: str, capacity: int) -> Fetch:
    return AiohttpFetch(base, capacity) if client == "aiohttp" else PyreqwestFetch(base, capacity)


async def measure(args: argparse.Namespace, base: str) -> dict[str, Round]:
    fetch = make_fetch(args.client, base, args.capacity)
    try:
        await floor(fetch, args.capacity, args.capacity)  # open the connections once
        contenders: dict[str, Callable[[], Awaitable[int]]] = {
            f"{fetch.name} floor (no engine)": lambda: floor(fetch, args.records, args.capacity),
            f"lockgate + {fetch.name}": lambda: through_lockgate(
                fetch, args.records, args.capacity
            ),
            "lockgate + sleep (no HTTP)": lambda: through_lockgate(
                Sleep(args.latency), args.records, args.capacity
            ),
        }
        best: dict[str, Round] = {}
        for _ in range(args.repeat):
            for label, contender in contenders.items():
                this = await timed(contender, args.records, fetch)
                if label not in best or this.seconds < best[label].seconds:
                    best[label] = this
    finally:
        await fetch.close()
    return best


def report(args: argparse.Namespace, best: dict[str, Round]) -> bool:
    ideal = args.capacity / args.latency
    rates = {label: args.records / one.seconds for label, one in best.items()}
    floor_label, engine_label, _ = best
    print(
        f"async I/O, {args.records:,} records, capacity {args.capacity:,}, server latency "
        f"{args.latency * 1000:.0f} ms, client {args.client}, best of {args.repeat}"
    )
    print(f"{'ideal (capacity / latency)':<31} {ideal:>10,.0f} rec/s")
    for label, rate in rates.items():
        print(
            f"{label:<31} {rate:>10,.0f} rec/s   {rate / ideal:.2f} x ideal   "
            f"{rate / rates[floor_label]:.2f} x floor"
        )
    heading = "CPU per record, us (best round)"
    print(f"{heading:<31} {'loop thread':>11} {'client':>8} {'server':>8}")
    for label, one in best.items():
        loop, client, server = (
            1e6 * cpu / args.records for cpu in (one.loop_cpu, one.client_cpu, one.server_cpu)
        )
        print(f"{label:<31} {loop:>11.0f} {client:>8.0f} {server:>8.0f}")
    met = rates[engine_label] >= GOAL * ideal
    print(f"goal: {engine_label} at least {GOAL:.2f} x ideal: {'met' if met else 'NOT met'}")
    if not met and rates[floor_label] < GOAL * ideal:
        reached = rates[floor_label] / ideal
        print(f"      (the {args.client} client alone reaches {reached:.2f} x ideal here)")
    return met


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--capacity", type=int, default=1_000)
    parser.add_argument("--latency", type=float, default=0.05, help="server delay, seconds")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; each keeps its best")
    parser.add_argument("--client", choices=CLIENTS, default=CLIENTS[0], help="HTTP client")
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
