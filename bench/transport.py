"""The data plane: one cross-process edge against an in-process Channel, in the same run.

Two spawned processes, each on its own uvloop loop, join by one connection (a Unix socket,
TCP on 127.0.0.1, or both): the producer sends ``--records`` records ``(i % 10_000, i % 100)``
in batches of ``--batch`` through a ``SendingChannel``, and the consumer takes them from
its local channel as an ``InputGate`` does (poll, wait on the doorbell when empty) and
counts them. Timed from the producer's first send to the consumer's end of input, on the
system-wide monotonic clock. The baseline is the same producer and consumer in one process
around one ``Channel`` of the same capacity. Before the records, on the idle edge, the
producer sends ``--barriers`` aligned barriers one at a time, then as many unaligned ones
(``send_first``), each stamped with its send time; the consumer notes when it takes each.
``--codecs`` also times pickle (the codec) against marshal on the same batches, and against
pickle without its memo (the pickler's fast mode, not used: an object several records share
would be written once per record).
Goals: at least 500,000 records/s across the edge; barrier latency under 5 ms.
"""

from __future__ import annotations

import argparse
import io
import marshal
import multiprocessing
import pickle
import shutil
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection as Pipe
from typing import Any

import anyio

from lockgate.actors import Channel, Doorbell, MailboxEmpty
from lockgate.engine import CheckpointBarrier, EndOfInput, run
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.events import ChannelItem, SnapshotOptions
from lockgate.engine.runtime.network.transport import connect, listen, local_channel

EDGE = ChannelId(1, 0, 0)
TOKEN = b"bench/transport.py"
PORTS = range(30300, 30400)
GOAL_RATE = 500_000
GOAL_LATENCY = 0.005
UNALIGNED = SnapshotOptions(unaligned=True)


def records(count: int) -> list[tuple[int, int]]:
    return [(i % 10_000, i % 100) for i in range(count)]


async def produce(sending: Any, data: list[Any], batch: int) -> float:
    started = time.monotonic()
    for start in range(0, len(data), batch):
        await sending.send(data[start : start + batch])
    await sending.send(EndOfInput())
    sending.close()
    return started


async def consume(channel: Channel[ChannelItem], doorbell: Doorbell) -> tuple[int, float, list]:
    """Take items as an InputGate does; return records, the end's time, barrier latencies."""
    count, latencies = 0, []
    while True:
        try:
            item = channel.receive_nowait()
        except MailboxEmpty:
            await doorbell.wait()
            continue
        if type(item) is list:
            count += len(item)
        elif type(item) is CheckpointBarrier:
            latencies.append((item.options.unaligned, time.monotonic() - item.timestamp))
        elif type(item) is EndOfInput:
            return count, time.monotonic(), latencies


# The two processes


def consumer_process(address: str, capacity: int, pipe: Pipe) -> None:
    pipe.send(run(_consumer, address, capacity, pipe))


async def _consumer(address: str, capacity: int, pipe: Pipe) -> tuple[int, float, list]:
    listener = await _listen(address)
    async with listener:
        pipe.send(str(listener.address))
        connection = await listener.accept()
    doorbell = Doorbell()
    channel = local_channel(EDGE, capacity, doorbell=doorbell)
    connection.open_receiving(EDGE, channel, on_overtaken=lambda barrier, records: None)
    async with connection:
        return await consume(channel, doorbell)


async def _listen(address: str) -> Any:
    if address != "tcp":
        return await listen(address, token=TOKEN, name="consumer")
    for port in PORTS:
        try:
            return await listen(f"tcp://127.0.0.1:{port}", token=TOKEN, name="consumer")
        except OSError:
            continue
    raise RuntimeError(f"no free port in {PORTS}")


def producer_process(address: str, count: int, batch: int, barriers: int, pipe: Pipe) -> None:
    pipe.send(run(_producer, address, count, batch, barriers))


async def _producer(address: str, count: int, batch: int, barriers: int) -> float:
    data = records(count)
    connection = await connect(address, token=TOKEN, name="producer")
    sending = connection.open_sending(EDGE, capacity=1)
    async with connection:
        await sending.send([])  # waits for the consumer's credits: the edge is open
        for number in range(barriers):  # aligned, in order, on the idle edge
            await sending.send(CheckpointBarrier(number, time.monotonic()))
            await anyio.sleep(0.002)
        for number in range(barriers):  # unaligned, sent first
            sending.send_first(CheckpointBarrier(barriers + number, time.monotonic(), UNALIGNED))
            await anyio.sleep(0.002)
        return await produce(sending, data, batch)


def cross_process(scheme: str, args: argparse.Namespace) -> tuple[float, list]:
    """One run across two spawned processes: records/s and the barriers' latencies."""
    spawn = multiprocessing.get_context("spawn")
    folder = tempfile.mkdtemp(prefix="lgb", dir="/tmp")
    address = f"unix://{folder}/edge" if scheme == "unix" else "tcp"
    to_consumer, consumer_end = spawn.Pipe()
    to_producer, producer_end = spawn.Pipe()
    consumer = spawn.Process(target=consumer_process, args=(address, args.capacity, consumer_end))
    consumer.start()
    listening_at = to_consumer.recv()
    producer = spawn.Process(
        target=producer_process,
        args=(listening_at, args.records, args.batch, args.barriers, producer_end),
    )
    producer.start()
    started = to_producer.recv()
    count, ended, latencies = to_consumer.recv()
    producer.join()
    consumer.join()
    shutil.rmtree(folder)
    if count != args.records:
        sys.exit(f"the consumer counted {count:,} records of {args.records:,}")
    return count / (ended - started), latencies


def in_process(args: argparse.Namespace) -> float:
    """The baseline: the same producer and consumer around one in-process Channel."""
    data = records(args.records)

    async def main() -> float:
        doorbell = Doorbell()
        channel = local_channel(EDGE, args.capacity, doorbell=doorbell)
        async with anyio.create_task_group() as group:
            result: list[Any] = []
            group.start_soon(lambda: _append(result, consume(channel, doorbell)))
            started = await produce(channel, data, args.batch)
        count, ended, _ = result[0]
        assert count == args.records
        return count / (ended - started)

    return run(main)


async def _append(into: list[Any], awaitable: Any) -> None:
    into.append(await awaitable)


# Codecs


def codecs(args: argparse.Namespace) -> None:
    batches = [records(args.batch), [(f"w{i % 5000}", 1) for i in range(args.batch)]]
    print(f"\ncodec, per batch of {args.batch} records (encode + decode), best of 5")
    for name, dumps, loads in (
        ("pickle 5", lambda b: pickle.dumps(b, protocol=5), pickle.loads),
        ("no memo", _dumps_without_memo, pickle.loads),
        ("marshal", marshal.dumps, marshal.loads),
    ):
        rates = [f"{_rate(dumps, loads, batch):,.0f} records/s" for batch in batches]
        print(f"  {name:<10} (int, int): {rates[0]:>20}   (str, int): {rates[1]:>20}")


def _dumps_without_memo(batch: list[Any]) -> bytes:
    """Pickle 5 in the pickler's fast mode: no memo, so shared objects are written each time."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True
    pickler.dump(batch)
    return buffer.getvalue()


def _rate(dumps: Any, loads: Any, batch: list[Any], times: int = 2000) -> float:
    """Records per second through ``loads(dumps(batch))``, best of 5."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(times):
            loads(dumps(batch))
        best = min(best, (time.perf_counter() - started) / times)
    return len(batch) / best


# The table


def main() -> None:
    args = parse()
    best: dict[str, float] = {}
    latencies: dict[str, list] = {scheme: [] for scheme in args.transport}
    for _ in range(args.repeat):  # interleaved rounds, each contender keeps its best
        best["in-process"] = max(best.get("in-process", 0.0), in_process(args))
        for scheme in args.transport:
            rate, measured = cross_process(scheme, args)
            best[scheme] = max(best.get(scheme, 0.0), rate)
            latencies[scheme] += measured
    report(args, best, latencies)
    if args.codecs:
        codecs(args)


def report(args: argparse.Namespace, best: dict[str, float], latencies: dict) -> None:
    baseline = best["in-process"]
    print(
        f"data plane, {args.records:,} records in batches of {args.batch}, window "
        f"{args.capacity} records, best of {args.repeat}"
    )
    print(f"  {'in-process Channel (baseline)':<34} {baseline:>14,.0f} records/s")
    for scheme in args.transport:
        rate = best[scheme]
        label = f"two processes, {scheme} socket"
        print(f"  {label:<34} {rate:>14,.0f} records/s   {rate / baseline:.2f} x in-process")
    for scheme in args.transport:
        for unaligned, kind in ((False, "aligned"), (True, "unaligned, sent first")):
            values = sorted(v for u, v in latencies[scheme] if u is unaligned)
            p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
            print(
                f"  barrier latency, {scheme}, {kind}: median {statistics.median(values) * 1e3:.3f}"
                f" ms, p99 {p99 * 1e3:.3f} ms, max {values[-1] * 1e3:.3f} ms ({len(values)})"
            )
    fastest = max(best[scheme] for scheme in args.transport)
    slowest_latency = max(
        statistics.median(v for _, v in latencies[scheme]) for scheme in args.transport
    )
    met = "met" if fastest >= GOAL_RATE else "NOT met"
    print(f"goal: at least {GOAL_RATE:,} records/s across the edge: {met}")
    met = "met" if slowest_latency < GOAL_LATENCY else "NOT met"
    print(f"goal: barrier latency across an idle edge under {GOAL_LATENCY * 1e3:.0f} ms: {met}")


def parse() -> argparse.Namespace:
    flags = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    flags.add_argument("--records", type=int, default=2_000_000)
    flags.add_argument("--batch", type=int, default=512)
    flags.add_argument("--capacity", type=int, default=2048, help="the channel's records")
    flags.add_argument("--barriers", type=int, default=200, help="of each kind, per run")
    flags.add_argument("--repeat", type=int, default=3)
    flags.add_argument("--transport", nargs="+", choices=["unix", "tcp"], default=["unix", "tcp"])
    flags.add_argument("--codecs", action="store_true", help="also time pickle and marshal")
    return flags.parse_args()


if __name__ == "__main__":
    main()
