"""Ingress: a service pushing events into a job, and the host loop's lag while the job checkpoints.

1. Throughput. A keyed count of ``--events`` events (``(i % 10_000, 1)``) read from a
   ``CollectionSource``, against the same job fed by a service task that sends every event
   with ``await ingress.send(event)`` into an ``IngressSource`` (then closes it). Best of
   ``--repeat`` runs each, same process; the ratio ingress / collection is printed (goal
   >= 0.5).
2. Loop lag. The same job holding ``--keys`` keys (sent through the ingress first) checkpoints
   every second to files while a ``LoopLagMonitor`` in the host's loop measures how late its
   1 ms sleeps wake, for ``--seconds``; the loop's lag with no job, measured just before in
   the same run, is the baseline. Goals: p99 < 5 ms, max < 50 ms while checkpointing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from harness import CountingSink

from lockgate.connectors import CollectionSource, IngressSource
from lockgate.engine import Source, StreamEnvironment, run
from lockgate.engine.testing import LoopLag, LoopLagMonitor

KEYS = 10_000
THROUGHPUT_GOAL = 0.5
P99_GOAL, MAX_GOAL = 0.005, 0.050

Event = tuple[int, int]


def add(a: Event, b: Event) -> Event:
    return a[0], a[1] + b[1]


def counting_job(
    source: Source[Event], sink: CountingSink, **checkpoints: Any
) -> StreamEnvironment:
    env = StreamEnvironment()
    if checkpoints:
        env.enable_checkpointing(checkpoints["interval"])
        env.set_checkpoint_storage(checkpoints["storage"])
    (
        env.from_source(source, uid="events")
        .key_by(lambda event: event[0])
        .reduce(add, uid="counts")
        .sink_to(sink, uid="out")
    )
    return env


async def from_collection(events: list[Event]) -> float:
    sink = CountingSink()
    started = time.perf_counter()
    await counting_job(CollectionSource(events), sink).execute("collection")
    elapsed = time.perf_counter() - started
    assert sink.count == len(events), (sink.count, len(events))
    return elapsed


async def from_ingress(events: list[Event]) -> float:
    ingress: IngressSource[Event] = IngressSource(capacity=10_000)
    sink = CountingSink()
    started = time.perf_counter()
    async with counting_job(ingress, sink).start("ingress") as job:
        for event in events:  # a service's handlers: one send per event
            await ingress.send(event)
        ingress.close()
        await job.wait()
    elapsed = time.perf_counter() - started
    assert sink.count == len(events), (sink.count, len(events))
    return elapsed


async def from_ingress_in_batches(events: list[Event]) -> float:
    ingress: IngressSource[Event] = IngressSource(capacity=10_000)
    sink = CountingSink()
    started = time.perf_counter()
    async with counting_job(ingress, sink).start("ingress-batches") as job:
        for first in range(0, len(events), 1_000):  # a service taking batches: send_many
            await ingress.send_many(events[first : first + 1_000])
        ingress.close()
        await job.wait()
    elapsed = time.perf_counter() - started
    assert sink.count == len(events), (sink.count, len(events))
    return elapsed


def best(runner: Any, events: list[Event], repeat: int) -> float:
    return min(run(runner, events) for _ in range(repeat))


async def idle_lag(seconds: float) -> LoopLag:
    async with LoopLagMonitor() as lag:
        await anyio.sleep(seconds)
    return lag.statistics()


async def lag_while_checkpointing(keys: int, seconds: float, folder: Path) -> tuple[LoopLag, int]:
    ingress: IngressSource[Event] = IngressSource(capacity=10_000)
    sink = CountingSink()
    storage = (folder / "checkpoints").as_uri()
    env = counting_job(ingress, sink, interval=1.0, storage=storage)
    async with env.start("lag") as job:
        await ingress.send_many((key, 1) for key in range(keys))
        while sink.count < keys:  # noqa: ASYNC110 (a benchmark may poll; tests never do)
            await anyio.sleep(0.05)
        before = job.metrics().checkpoints.completed
        async with LoopLagMonitor() as lag:
            await anyio.sleep(seconds)
        completed = job.metrics().checkpoints.completed - before
        job.cancel()
    return lag.statistics(), completed


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:7.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=6.0)
    arguments = parser.parse_args()

    events = [(i % KEYS, 1) for i in range(arguments.events)]
    collection = best(from_collection, events, arguments.repeat)
    ingress = best(from_ingress, events, arguments.repeat)
    batches = best(from_ingress_in_batches, events, arguments.repeat)
    ratio = collection / ingress
    print(f"ingress throughput: {arguments.events:,} events, best of {arguments.repeat}")
    print(f"  CollectionSource               {arguments.events / collection:12,.0f} events/s")
    print(f"  IngressSource, send per event  {arguments.events / ingress:12,.0f} events/s")
    print(f"  IngressSource, send_many 1,000 {arguments.events / batches:12,.0f} events/s")
    verdict = "met" if ratio >= THROUGHPUT_GOAL else "NOT met"
    print(f"  ratio send/collection {ratio:.2f} (goal >= {THROUGHPUT_GOAL}: {verdict})")
    print(f"  ratio send_many/collection {collection / batches:.2f}")

    baseline = run(idle_lag, min(arguments.seconds, 3.0))
    with tempfile.TemporaryDirectory() as folder:
        lag, completed = run(
            lag_while_checkpointing, arguments.keys, arguments.seconds, Path(folder)
        )
    print(
        f"host loop lag, {arguments.keys:,} keys checkpointed every second ({completed} completed)"
    )
    print(f"  no job (baseline)  p99 {ms(baseline.p99)}  max {ms(baseline.max)}")
    print(f"  checkpointing      p99 {ms(lag.p99)}  max {ms(lag.max)}  busy max {ms(lag.busy_max)}")
    p99 = "met" if lag.p99 < P99_GOAL else "NOT met"
    most = "met" if lag.max < MAX_GOAL else "NOT met"
    print(f"  goals: p99 < {ms(P99_GOAL).strip()} {p99}; max < {ms(MAX_GOAL).strip()} {most}")


if __name__ == "__main__":
    main()
