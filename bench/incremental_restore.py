"""Restore time of 1,000,000 keys into RocksDB, at the same parallelism and at another.

The keyed count of ``incremental.py`` loads ``--keys`` keys on the RocksDB backend at
parallelism P and takes one checkpoint, once incremental (RocksDB's own files) and once full
(key groups). Then a new job restores each into RocksDB, timed from ``start`` until the
first record after the restore comes out of the count (so the state is in place: every
subtask restores before any record flows), in interleaved rounds, best of ``--repeat``:

- **files**: the incremental checkpoint's files downloaded and opened as each subtask's
  database, at P (Flink's restore without rescaling);
- **rescaled to P+1, P-1**: the same checkpoint at another parallelism, as lockgate (and
  Flink) restores it: each new subtask opens the old files with the largest overlap of its
  key groups, deletes the other key groups and inserts the rest from the other old files;
- **key groups**: the same checkpoint read back into plain key groups and written into new
  databases, at P and at P+1 (what lockgate did at another parallelism before; forced here
  by a backend that says it cannot open the files);
- **full**: the full checkpoint's key groups written into new databases, at P.

Printed: seconds of each and its ratio to ``files``. **Goal: a rescaled restore within
1.5 x files** (issue 19). Each restore is checked: the count of the key it counts once more
must be 2 (restored 1, plus 1). Filesystem storage and databases in a temporary folder. Run
as ``incremental.py --restore``.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from incremental import Feed, FeedSource

from lockgate.engine import Sink, SinkContext, SinkWriter, StreamEnvironment
from lockgate.engine.state import RocksDBStateBackend

CHECKED_KEY = 7
GOAL = 1.5


class KeyGroupRestores(RocksDBStateBackend):
    """The RocksDB backend, but restores read native snapshots as key groups (the old path)."""

    def native_restore_folder(self, backend: str) -> Path | None:
        return None


class FirstRecord(Sink[Any]):
    """Keeps the first record any subtask writes, and signals it."""

    def __init__(self) -> None:
        self.record: Any = None
        self.arrived = anyio.Event()

    def __deepcopy__(self, memo: dict[int, Any]) -> FirstRecord:
        return self

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _FirstWriter(self)


class _FirstWriter(SinkWriter[Any]):
    def __init__(self, sink: FirstRecord) -> None:
        self.sink = sink

    async def write(self, records: list[Any]) -> None:
        if records and not self.sink.arrived.is_set():
            self.sink.record = records[0]
            self.sink.arrived.set()


@dataclass(frozen=True)
class Setup:
    """Where one run keeps its checkpoints and databases, and how the job is shaped."""

    folder: Path
    keys: int
    parallelism: int

    def env(
        self, *, incremental: bool, files: bool = True, parallelism: int | None = None
    ) -> StreamEnvironment:
        env = StreamEnvironment(parallelism=parallelism or self.parallelism)
        env.enable_checkpointing()
        env.set_checkpoint_storage((self.folder / "checkpoints").as_uri())
        databases = self.folder / "databases"
        env.set_state_backend("rocksdb", path=databases, incremental=incremental)
        if not files:
            env.state_backend = KeyGroupRestores(databases)
        return env


def counts(env: StreamEnvironment, feed: Feed, sink: Sink[Any]) -> None:
    (
        env.from_source(FeedSource(feed), uid="feed", parallelism=1)
        .map(lambda key: (key, 1))
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="out")
    )


async def checkpoint(setup: Setup, *, incremental: bool) -> str:
    """Count every key once, checkpoint; return the checkpoint's location."""
    env, feed = setup.env(incremental=incremental), Feed()
    counts(env, feed, FirstRecord())
    feed.append(range(setup.keys))
    async with env.start(f"counts-{incremental}") as job:
        await feed.caught_up.wait()
        completed = await job.trigger_checkpoint()
        job.cancel()
    return completed.location


@dataclass(frozen=True)
class Way:
    """One way to restore: which checkpoint, into which backend, at which parallelism."""

    label: str
    incremental: bool
    files: bool
    parallelism: int


async def restore(setup: Setup, location: str, way: Way) -> float:
    """Seconds from starting a job restored from ``location`` to its first counted record."""
    env = setup.env(incremental=way.incremental, files=way.files, parallelism=way.parallelism)
    feed, sink = Feed(), FirstRecord()
    counts(env, feed, sink)
    feed.append([CHECKED_KEY])
    started = time.perf_counter()
    async with env.start(f"restored-{way.parallelism}", restore_from=location) as job:
        await sink.arrived.wait()
        seconds = time.perf_counter() - started
        job.cancel()
    if sink.record != (CHECKED_KEY, 2):
        raise AssertionError(f"restored count of {CHECKED_KEY}: {sink.record}, expected 2")
    return seconds


def ways(parallelism: int) -> list[Way]:
    """The restores to time of a checkpoint taken at ``parallelism``."""
    made = [Way(f"incremental, files opened, at {parallelism}", True, True, parallelism)]
    for other in (parallelism + 1, parallelism - 1):
        if other >= 1:
            made.append(Way(f"incremental, rescaled to {other}", True, True, other))
    made += [
        Way(f"incremental, read into key groups, at {parallelism}", True, False, parallelism),
        Way(f"incremental, key groups, at {parallelism + 1}", True, False, parallelism + 1),
        Way(f"full checkpoint (key groups), at {parallelism}", False, True, parallelism),
    ]
    return made


async def measure_restores(keys: int, repeat: int, parallelism: int) -> dict[Way, float]:
    """Best seconds of each way to restore, over ``repeat`` interleaved rounds."""
    with tempfile.TemporaryDirectory() as folder:
        setup = Setup(Path(folder), keys, parallelism)
        locations = {
            True: await checkpoint(setup, incremental=True),
            False: await checkpoint(setup, incremental=False),
        }
        best = dict.fromkeys(ways(parallelism), math.inf)
        for _ in range(repeat):
            for way in best:
                seconds = await restore(setup, locations[way.incremental], way)
                best[way] = min(best[way], seconds)
    return best


def report(best: dict[Way, float], keys: int, repeat: int, parallelism: int) -> None:
    print(
        f"restore of {keys:,} keys into RocksDB, checkpoint taken at parallelism "
        f"{parallelism}, best of {repeat}"
    )
    files = next(iter(best.values()))
    for way, seconds in best.items():
        print(f"{way.label:<52}{seconds:>8.3f} s{seconds / files:>8.2f} x files")
    for way, seconds in best.items():
        if way.files and way.incremental and way.parallelism != parallelism:
            verdict = "met" if seconds / files <= GOAL else "NOT met"
            print(f"goal: {way.label}, at most {GOAL} x files: {verdict}")


async def main_restore(keys: int, repeat: int, parallelisms: Sequence[int]) -> None:
    for parallelism in parallelisms:
        report(await measure_restores(keys, repeat, parallelism), keys, repeat, parallelism)
