"""Incremental checkpoints: bytes and duration with 1% of 1,000,000 keys changed per interval.

For each state backend, the same job runs with full and with incremental checkpoints, and
on RocksDB with incremental checkpoints once per compaction tuning (``--rocksdb-compaction
STYLE[:TRIGGER] ...``: level or universal compaction, level-0 files that trigger one): a
keyed count over ``KEYS`` keys is loaded and checkpointed (the base), then ``ROUNDS`` times
1% of the keys change and a checkpoint is taken. Printed, over those checkpoints: the bytes
each wrote (mean, median, max: files the previous checkpoint did not use), their mean
duration, the longest synchronous part (on the event loop; RocksDB's incremental checkpoints
flush the memtable there), incremental as a fraction of full, by mean and by median (goal:
mean bytes at most 0.10), the mean size of the state a checkpoint references (for RocksDB,
its SST files: the database on disk) and the rate of the changed records (each one read,
counted and written back). RocksDB's compactions rewrite SST files, so some intervals of an
incremental RocksDB job upload much more than others: the median shows a quiet interval,
the mean includes the compactions. Filesystem storage in a temporary folder. Run with
``--help`` for flags. ``--restore`` measures restores instead (``incremental_restore.py``):
1,000,000 keys from an incremental RocksDB checkpoint into RocksDB at an unchanged
parallelism, its files opened as the database against read into key groups, and against a
full checkpoint.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
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
from lockgate.engine.state.rocksdb.options import RocksDBOptions

KEYS = 1_000_000
CHANGED = 0.01
ROUNDS = 20
BYTES_GOAL = 0.10
TUNINGS = ("level:4", "level:20", "universal:8")  # RocksDB's default, then tuned ones


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
    """The measured checkpoints of one backend, mode and tuning: bytes, time, state, rate."""

    backend: str
    incremental: bool
    tuning: str
    sizes: list[int]
    seconds: list[float]
    sync: float
    states: list[int]
    rate: float

    @classmethod
    def of(cls, row: Row, ran: Rounds) -> Measured:
        """Measure every checkpoint after the first (the base) against the one before it."""
        checkpoints = ran.checkpoints
        measured = checkpoints[1:]
        sizes = [written(c, previous) for previous, c in zip(checkpoints, measured, strict=False)]
        seconds = [c.duration for c in measured]
        sync = max(c.statistics.sync_duration for c in measured)
        states = [sum(_files(c).values()) for c in measured]
        return cls(row.backend, row.incremental, row.label, sizes, seconds, sync, states, ran.rate)

    @property
    def mode(self) -> str:
        return "incremental" if self.incremental else "full"

    @property
    def name(self) -> str:
        return f"{self.backend} {self.mode} {self.tuning}".rstrip()


@dataclass(frozen=True)
class Row:
    """One job to measure: a backend, full or incremental, and RocksDB's compaction tuning."""

    backend: str
    incremental: bool
    tuning: RocksDBOptions | None = None

    @property
    def label(self) -> str:
        """``style:trigger`` of a RocksDB row, empty for memory."""
        if self.tuning is None:
            return ""
        return f"{self.tuning.compaction_style}:{self.tuning.level0_compaction_trigger}"

    def configure(self, env: StreamEnvironment) -> None:
        if self.tuning is None:
            env.set_state_backend(self.backend, incremental=self.incremental)
            return
        env.set_state_backend(
            self.backend,
            incremental=self.incremental,
            compaction_style=self.tuning.compaction_style,
            level0_compaction_trigger=self.tuning.level0_compaction_trigger,
        )


@dataclass(frozen=True)
class Rounds:
    """The checkpoints of one run, and how fast its changed records were processed."""

    checkpoints: list[CompletedCheckpoint]
    rate: float


async def measure(row: Row, *, keys: int, rounds: int) -> Measured:
    feed = Feed()
    with tempfile.TemporaryDirectory() as folder:
        env = StreamEnvironment(parallelism=1)
        env.enable_checkpointing()
        env.set_checkpoint_storage(Path(folder).as_uri())
        row.configure(env)
        (
            env.from_source(FeedSource(feed), uid="feed")
            .key_by(lambda record: record)
            .reduce(lambda a, b: a + b, uid="counts")
            .sink_to(Discard(), uid="out")
        )
        ran = await checkpoint_rounds(env, feed, keys, rounds)
    return Measured.of(row, ran)


async def checkpoint_rounds(env: StreamEnvironment, feed: Feed, keys: int, rounds: int) -> Rounds:
    """Load ``keys`` keys and checkpoint (the base), then ``rounds`` times change 1% and again.

    The rate is of the changed records: read, added to and written back to a state of
    ``keys`` keys, from appending them until the job read them all.
    """
    feed.append(range(keys))
    changed = int(keys * CHANGED)
    busy = 0.0
    async with env.start("incremental") as job:
        await feed.caught_up.wait()
        checkpoints = [await job.trigger_checkpoint()]
        for round_ in range(rounds):
            started = time.perf_counter()
            feed.append(range(round_ * changed, (round_ + 1) * changed))
            await feed.caught_up.wait()
            busy += time.perf_counter() - started
            checkpoints.append(await job.trigger_checkpoint())
        job.cancel()
    return Rounds(checkpoints, rounds * changed / busy)


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
    """Print the table; whether every backend has an incremental row that meets the goal."""
    rounds = len(results[0].sizes)
    print(f"checkpoints after {CHANGED:.0%} of the keys changed, {rounds} rounds")
    print(
        f"{'backend':<10}{'mode':<13}{'compaction':<14}{'mean bytes':>12}{'median':>11}"
        f"{'max':>12}{'seconds':>9}{'sync':>7}{'vs full':>9}{'median':>8}{'state MB':>10}"
        f"{'rec/s':>11}"
    )
    for result in results:
        ratio, median_ratio = _ratio(result, results, mean), _ratio(result, results, median)
        print(
            f"{result.backend:<10}{result.mode:<13}{result.tuning:<14}{mean(result.sizes):>12,.0f}"
            f"{median(result.sizes):>11,.0f}{max(result.sizes):>12,}{mean(result.seconds):>9.3f}"
            f"{result.sync:>7.3f}{ratio:>8.3f}x{median_ratio:>7.3f}x"
            f"{mean(result.states) / 1e6:>10.1f}{result.rate:>11,.0f}"
        )
    return goal_met(results)


def goal_met(results: list[Measured]) -> bool:
    """Print which incremental rows meet the goal; whether every backend has one."""
    meeting = [r for r in results if r.incremental and _ratio(r, results, mean) <= BYTES_GOAL]
    names = ", ".join(r.name for r in meeting) or "none"
    print(f"goal: incremental writes at most {BYTES_GOAL:.2f}x the bytes of full (mean): {names}")
    return {r.backend for r in results} <= {r.backend for r in meeting}


def _ratio(
    result: Measured, results: list[Measured], average: Callable[[list[int]], float]
) -> float:
    """``result``'s bytes as a fraction of those of its backend's full checkpoints."""
    full = next(r for r in results if r.backend == result.backend and not r.incremental)
    return average(result.sizes) / average(full.sizes)


def rows(backends: Sequence[str], tunings: Sequence[RocksDBOptions]) -> list[Row]:
    """Full and incremental on each backend; RocksDB's incremental once per tuning."""
    made = []
    for backend in backends:
        if backend != "rocksdb":
            made += [Row(backend, incremental=False), Row(backend, incremental=True)]
            continue
        made.append(Row(backend, incremental=False, tuning=RocksDBOptions()))
        made += [Row(backend, incremental=True, tuning=tuning) for tuning in tunings]
    return made


def compaction(text: str) -> RocksDBOptions:
    """Parse ``STYLE[:TRIGGER]`` (``universal:8``) into RocksDB options."""
    style, _, trigger = text.partition(":")
    if trigger and not trigger.isdigit():
        raise argparse.ArgumentTypeError(f"expected STYLE[:TRIGGER] (universal:8); got {text!r}")
    try:
        if not trigger:
            return RocksDBOptions(style)  # type: ignore[arg-type]
        return RocksDBOptions(style, int(trigger))  # type: ignore[arg-type]
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


async def main_async(table: Sequence[Row], keys: int, rounds: int) -> bool:
    results = [await measure(row, keys=keys, rounds=rounds) for row in table]
    return report(results)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["memory", "rocksdb"])
    parser.add_argument("--keys", type=int, default=KEYS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument(
        "--rocksdb-compaction",
        nargs="+",
        type=compaction,
        default=[compaction(text) for text in TUNINGS],
        metavar="STYLE[:TRIGGER]",
        help="RocksDB incremental rows: compaction style and level-0 trigger "
        f"(default: {' '.join(TUNINGS)})",
    )
    parser.add_argument(
        "--restore",
        action="store_true",
        help="time restores into RocksDB (files, key groups, full) instead; with --keys, "
        "--repeat and --parallelism",
    )
    parser.add_argument("--repeat", type=int, default=3, help="--restore: rounds, best kept")
    parser.add_argument("--parallelism", type=int, nargs="+", default=[1], help="--restore")
    args = parser.parse_args(argv)
    if args.restore:
        from incremental_restore import main_restore

        run(main_restore, args.keys, args.repeat, args.parallelism)
        return 0
    table = rows(args.backends, args.rocksdb_compaction)
    return 0 if run(main_async, table, args.keys, args.rounds) else 1


if __name__ == "__main__":
    sys.exit(main())
