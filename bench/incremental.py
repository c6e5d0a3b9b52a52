"""Incremental checkpoints: bytes and duration with 1% of 1,000,000 keys changed per interval.

For each state backend, the same job runs twice, with full and with incremental checkpoints:
a keyed count over ``KEYS`` keys is loaded and checkpointed (the base), then ``ROUNDS`` times
1% of the keys change and a checkpoint is taken. Printed, over those checkpoints: the bytes
each wrote (mean, median, max: files the previous checkpoint did not use), their mean
duration, the longest synchronous part (on the event loop; RocksDB's incremental checkpoints
flush the memtable there), and incremental as a fraction of full, by mean and by median
(goal: mean bytes at most 0.10). RocksDB's compactions rewrite SST files, so some intervals
of an incremental RocksDB job upload much more than others: the median shows a quiet
interval, the mean includes the compactions. Filesystem storage in a temporary folder. Run
with ``--help`` for flags.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean, median
from typing import Any

import anyio
import anyio.lowlevel

from lockgate.engine import (
    CompletedCheckpoint,
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

KEYS = 1_000_000
CHANGED = 0.01
ROUNDS = 3
BYTES_GOAL = 0.10


class Feed:
    """Records a test appends and one reader reads, waiting when it caught up."""

    def __init__(self) -> None:
        self.records: list[Any] = []
        self.read = 0
        self.caught_up = anyio.Event()
        self._appended = anyio.Event()

    def append(self, records: Sequence[Any]) -> None:
        self.records.extend(records)
        self.caught_up = anyio.Event()
        self._appended.set()
        self._appended = anyio.Event()

    async def take(self, count: int) -> list[Any]:
        while self.read == len(self.records):
            self.caught_up.set()
            await self._appended.wait()
        batch = self.records[self.read : self.read + count]
        self.read += len(batch)
        return batch

    def __deepcopy__(self, memo: dict[int, Any]) -> Feed:
        return self


class FeedSource(Source[Any]):
    def __init__(self, feed: Feed) -> None:
        self.feed = feed

    @property
    def bounded(self) -> bool:
        return False

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit("feed", 0)]

    def create_reader(self, splits: Sequence[SourceSplit], context: SourceContext) -> _Reader:
        return _Reader(self.feed)


class _Reader(SourceReader[Any]):
    def __init__(self, feed: Feed) -> None:
        self.feed = feed

    async def read(self, max_records: int) -> list[Any]:
        await anyio.lowlevel.checkpoint()
        return await self.feed.take(max_records)

    def snapshot_splits(self) -> list[SourceSplit]:
        return [SourceSplit("feed", self.feed.read)]


class Discard(Sink[Any]):
    """Drops every record (the bench measures state, not output)."""

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _Dropping()


class _Dropping(SinkWriter[Any]):
    async def write(self, records: list[Any]) -> None:
        pass


@dataclass(frozen=True)
class Measured:
    """The measured checkpoints of one backend and mode: bytes each wrote, time each took."""

    backend: str
    incremental: bool
    sizes: list[int]
    seconds: list[float]
    sync: float

    @classmethod
    def of(
        cls, backend: str, *, incremental: bool, checkpoints: list[CompletedCheckpoint]
    ) -> Measured:
        """Measure every checkpoint after the first (the base) against the one before it."""
        measured = checkpoints[1:]
        sizes = [written(c, previous) for previous, c in zip(checkpoints, measured, strict=False)]
        seconds = [c.duration for c in measured]
        sync = max(c.statistics.sync_duration for c in measured)
        return cls(backend, incremental, sizes, seconds, sync)

    @property
    def mode(self) -> str:
        return "incremental" if self.incremental else "full"


async def measure(backend: str, *, incremental: bool, keys: int, rounds: int) -> Measured:
    feed = Feed()
    with tempfile.TemporaryDirectory() as folder:
        env = StreamEnvironment(parallelism=1)
        env.enable_checkpointing()
        env.set_checkpoint_storage(Path(folder).as_uri())
        env.set_state_backend(backend, incremental=incremental)
        (
            env.from_source(FeedSource(feed), uid="feed")
            .key_by(lambda record: record)
            .reduce(lambda a, b: a + b, uid="counts")
            .sink_to(Discard(), uid="out")
        )
        checkpoints = await checkpoint_rounds(env, feed, keys, rounds)
    return Measured.of(backend, incremental=incremental, checkpoints=checkpoints)


async def checkpoint_rounds(
    env: StreamEnvironment, feed: Feed, keys: int, rounds: int
) -> list[CompletedCheckpoint]:
    """Load ``keys`` keys and checkpoint (the base), then ``rounds`` times change 1% and again."""
    feed.append(range(keys))
    changed = int(keys * CHANGED)
    async with env.start("incremental") as job:
        await feed.caught_up.wait()
        checkpoints = [await job.trigger_checkpoint()]
        for round_ in range(rounds):
            feed.append(range(round_ * changed, (round_ + 1) * changed))
            await feed.caught_up.wait()
            checkpoints.append(await job.trigger_checkpoint())
        job.cancel()
    return checkpoints


def written(completed: CompletedCheckpoint, previous: CompletedCheckpoint) -> int:
    """Bytes the checkpoint wrote: those of its files that ``previous`` did not use.

    A memory delta is one new file that lists older ones as shared; a RocksDB incremental
    checkpoint writes a small main file and lists every SST file it uses as shared, most of
    them uploaded by earlier checkpoints.
    """
    before = _files(previous)
    return sum(size for location, size in _files(completed).items() if location not in before)


def _files(completed: CompletedCheckpoint) -> dict[str, int]:
    handles = [h for h in completed.metadata.operators["counts"].handles if h is not None]
    files = [file for handle in handles for file in (handle, *handle.shared)]
    return {file.location: file.size for file in files}


def report(results: list[Measured]) -> bool:
    rounds = len(results[0].sizes)
    print(f"checkpoints after {CHANGED:.0%} of the keys changed, {rounds} rounds")
    print(
        f"{'backend':<10}{'mode':<13}{'mean bytes':>14}{'median':>12}{'max':>12}"
        f"{'seconds':>9}{'sync':>8}{'vs full':>9}{'median':>8}"
    )
    ok = True
    for result in results:
        full = next(r for r in results if r.backend == result.backend and not r.incremental)
        ratio = mean(result.sizes) / mean(full.sizes)
        median_ratio = median(result.sizes) / median(full.sizes)
        print(
            f"{result.backend:<10}{result.mode:<13}{mean(result.sizes):>14,.0f}"
            f"{median(result.sizes):>12,.0f}{max(result.sizes):>12,}"
            f"{mean(result.seconds):>9.3f}{result.sync:>8.3f}{ratio:>8.3f}x{median_ratio:>7.3f}x"
        )
        if result.incremental:
            ok &= ratio <= BYTES_GOAL
    print(
        f"goal: incremental writes at most {BYTES_GOAL:.2f}x the bytes of full (mean): "
        f"{'met' if ok else 'NOT met'}"
    )
    return ok


async def main_async(backends: Sequence[str], keys: int, rounds: int) -> bool:
    results = [
        await measure(backend, incremental=incremental, keys=keys, rounds=rounds)
        for backend in backends
        for incremental in (False, True)
    ]
    return report(results)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["memory", "rocksdb"])
    parser.add_argument("--keys", type=int, default=KEYS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args(argv)
    return 0 if run(main_async, args.backends, args.keys, args.rounds) else 1


if __name__ == "__main__":
    sys.exit(main())
