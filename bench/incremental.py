"""Incremental checkpoints: bytes and duration with 1% of 1,000,000 keys changed per interval.

For each state backend, the same job runs twice, with full and with incremental checkpoints:
a keyed count over ``KEYS`` keys is loaded and checkpointed (the base), then ``ROUNDS`` times
1% of the keys change and a checkpoint is taken. Printed: the mean bytes written and the
mean duration of those checkpoints, and incremental as a fraction of full (goal: bytes at
most 0.10). Filesystem storage in a temporary folder. Run with ``--help`` for flags.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
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
    backend: str
    incremental: bool
    bytes: float
    seconds: float


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
        feed.append(range(keys))
        measured: list[CompletedCheckpoint] = []
        async with env.start("incremental") as job:
            await feed.caught_up.wait()
            await job.trigger_checkpoint()
            changed = int(keys * CHANGED)
            for round_ in range(rounds):
                feed.append(range(round_ * changed, (round_ + 1) * changed))
                await feed.caught_up.wait()
                measured.append(await job.trigger_checkpoint())
            job.cancel()
    sizes = [c.metadata.operators["counts"].state_size for c in measured]
    return Measured(
        backend,
        incremental,
        sum(sizes) / len(sizes),
        sum(c.duration for c in measured) / len(measured),
    )


def report(results: list[Measured]) -> bool:
    print(f"checkpoints after {CHANGED:.0%} of the keys changed (mean of the measured rounds)")
    print(f"{'backend':<10}{'mode':<13}{'bytes':>14}{'seconds':>10}{'vs full':>10}")
    ok = True
    for result in results:
        full = next(r for r in results if r.backend == result.backend and not r.incremental)
        ratio = result.bytes / full.bytes
        mode = "incremental" if result.incremental else "full"
        print(
            f"{result.backend:<10}{mode:<13}{result.bytes:>14,.0f}{result.seconds:>10.3f}"
            f"{ratio:>9.3f}x"
        )
        if result.incremental:
            ok &= ratio <= BYTES_GOAL
    print(
        f"goal: incremental writes at most {BYTES_GOAL:.2f}x the bytes of full: "
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
