"""Unaligned checkpoints under heavy backpressure: how long a checkpoint takes, aligned or not.

An endless source feeds ``map -> rebalance -> map -> rebalance -> sink`` at parallelism 2,
and the sink writes 1,000 records a second in all, each subtask its share (a rate limit on
the real clock), so every channel is full. Once they are, checkpoints are triggered one
after the other and timed from trigger to completion: first with aligned checkpoints, then,
in a second job of the same run, with unaligned ones. An aligned barrier waits behind every
record queued on its way to the sink, so its checkpoint takes about (records in flight) /
(sink rate); an unaligned barrier overtakes them, and its checkpoint stores them instead.

Printed: each checkpoint's duration, the in-flight bytes it stored, the median per mode and
the ratio unaligned / aligned. Goal: unaligned under a tenth of aligned. Run with ``--help``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel

from lockgate.engine import (
    CompletedCheckpoint,
    JobClient,
    Sink,
    SinkContext,
    SinkWriter,
    Source,
    SourceContext,
    SourceReader,
    SourceSplit,
    StreamEnvironment,
    run,
)

GOAL = 0.1  # unaligned checkpoints take at most a tenth of the time aligned ones take
FULL = 0.8  # channels count as full from this fill level
LABEL_WIDTH = 11


class EndlessNumbers(Source[int]):
    """An unbounded source: each subtask counts up from its own start, as fast as it may."""

    @property
    def bounded(self) -> bool:
        return False

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(str(index), index * 10**12) for index in range(parallelism)]

    def create_reader(self, splits: Sequence[SourceSplit], context: SourceContext) -> _Counter:
        return _Counter([int(split.position) for split in splits])


class _Counter(SourceReader[int]):
    def __init__(self, starts: list[int]) -> None:
        self.next = starts[0] if starts else 0
        self.split = str(self.next // 10**12)

    async def read(self, max_records: int) -> list[int]:
        await anyio.lowlevel.checkpoint()
        batch = list(range(self.next, self.next + max_records))
        self.next += max_records
        return batch

    def snapshot_splits(self) -> list[SourceSplit]:
        return [SourceSplit(self.split, self.next)]


class RateLimitedSink(Sink[Any]):
    """Writes ``rate`` records a second in all: each subtask its share, each batch waiting
    its turn on the real clock (a token bucket without burst)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _RateLimitedWriter(self.rate / context.parallelism)


class _RateLimitedWriter(SinkWriter[Any]):
    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.free_at = 0.0

    async def write(self, records: list[Any]) -> None:
        now = time.monotonic()
        self.free_at = max(now, self.free_at) + len(records) / self.rate
        await anyio.sleep(self.free_at - now)


@dataclass(frozen=True)
class Options:
    rate: float
    checkpoints: int
    parallelism: int
    batch_size: int
    channel_capacity: int


@dataclass(frozen=True)
class Timed:
    """One checkpoint: its duration and the in-flight bytes it stored."""

    seconds: float
    in_flight: int


def backpressured_job(options: Options, *, unaligned: bool) -> StreamEnvironment:
    env = StreamEnvironment(
        parallelism=options.parallelism,
        batch_size=options.batch_size,
        channel_capacity=options.channel_capacity,
    )
    env.enable_checkpointing(None, unaligned=unaligned, timeout=300.0)  # triggered only
    (
        env.from_source(EndlessNumbers(), uid="numbers")
        .map(lambda n: (n % 100, n), uid="pairs")
        .rebalance()
        .map(lambda pair: (pair[0], pair[1] * 2), uid="work")
        .rebalance()
        .sink_to(RateLimitedSink(options.rate), uid="out")
    )
    return env


def channels_full(job: JobClient) -> bool:
    """Whether the channels behind the source hold ``FULL`` of what they can hold, together."""
    downstream = [*job.metrics().of("work"), *job.metrics().of("out")]
    capacity = sum(s.input_capacity for s in downstream)  # 0 until the job is deployed
    return capacity > 0 and sum(s.input_buffered for s in downstream) >= FULL * capacity


async def wait_until_full(job: JobClient) -> None:
    while not channels_full(job):  # noqa: ASYNC110 - metrics signal nothing: poll them
        await anyio.sleep(0.05)


def timed(completed: CompletedCheckpoint) -> Timed:
    record = completed.statistics
    return Timed(completed.duration, 0 if record is None else record.persisted_in_flight)


async def time_checkpoints(options: Options, *, unaligned: bool) -> list[Timed]:
    env = backpressured_job(options, unaligned=unaligned)
    times = []
    async with env.start("backpressured") as job:
        for _ in range(options.checkpoints):
            await wait_until_full(job)
            times.append(timed(await job.trigger_checkpoint()))
        job.cancel()
    return times


def report(label: str, times: list[Timed]) -> float:
    median = statistics.median(t.seconds for t in times)
    each = ", ".join(f"{t.seconds:.3f}" for t in times)
    in_flight = ", ".join(f"{t.in_flight:,}" for t in times)
    print(f"{label:<{LABEL_WIDTH}} median {median:7.3f} s   each: {each}")
    print(f"{'':<{LABEL_WIDTH}} in-flight bytes stored: {in_flight}")
    return median


async def main(options: Options) -> bool:
    print(
        f"sink {options.rate:,.0f} records/s, parallelism {options.parallelism}, "
        f"batch {options.batch_size}, channels of {options.channel_capacity} records; "
        f"{options.checkpoints} checkpoints per mode, each with every channel full"
    )
    aligned = report("aligned", await time_checkpoints(options, unaligned=False))
    unaligned = report("unaligned", await time_checkpoints(options, unaligned=True))
    ratio = unaligned / aligned
    met = ratio < GOAL
    print(f"unaligned / aligned = {ratio:.3f}  (goal: under {GOAL}: {'met' if met else 'NOT met'})")
    return met


def arguments(argv: Sequence[str] | None = None) -> Options:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1_000.0, help="sink records/s (1000)")
    parser.add_argument("--checkpoints", type=int, default=3, help="per mode (3)")
    parser.add_argument("--parallelism", type=int, default=2, help="of every operator (2)")
    parser.add_argument("--batch-size", type=int, default=32, help="records per batch (32)")
    parser.add_argument(
        "--channel-capacity", type=int, default=512, help="records per channel (512)"
    )
    flags = parser.parse_args(argv)
    return Options(
        flags.rate, flags.checkpoints, flags.parallelism, flags.batch_size, flags.channel_capacity
    )


if __name__ == "__main__":
    sys.exit(0 if run(main, arguments()) else 1)
