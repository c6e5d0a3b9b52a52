"""Restore time of 1,000,000 keys into RocksDB at an unchanged parallelism, three ways.

The keyed count of ``incremental.py`` loads ``--keys`` keys on the RocksDB backend and takes
one checkpoint, once incremental (RocksDB's own files) and once full (key groups). Then a new
job restores each into RocksDB at the same parallelism, timed from ``start`` until the first
record after the restore comes out of the count (so the state is in place), in interleaved
rounds, best of ``--repeat``:

- **files**: the incremental checkpoint's files are downloaded and opened as each subtask's
  database (Flink's restore without rescaling; what lockgate does by default);
- **key groups**: the same checkpoint read back into plain key groups and written into a new
  database (what lockgate does at another parallelism; forced here by a backend that says it
  cannot open the files);
- **full**: the full checkpoint's key groups written into a new database.

Printed: seconds of each and the ratios of the others to ``files``. Each restore is checked:
the count of the key it counts once more must be 2 (restored 1, plus 1). Filesystem storage
and databases in a temporary folder. Run as ``incremental.py --restore``.
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
WAYS = ("files", "key groups", "full")


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

    def env(self, *, incremental: bool, files: bool = True) -> StreamEnvironment:
        env = StreamEnvironment(parallelism=self.parallelism)
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


async def restore(setup: Setup, location: str, *, incremental: bool, files: bool) -> float:
    """Seconds from starting a job restored from ``location`` to its first counted record."""
    env, feed, sink = setup.env(incremental=incremental, files=files), Feed(), FirstRecord()
    counts(env, feed, sink)
    feed.append([CHECKED_KEY])
    started = time.perf_counter()
    async with env.start(f"restored-{incremental}-{files}", restore_from=location) as job:
        await sink.arrived.wait()
        seconds = time.perf_counter() - started
        job.cancel()
    if sink.record != (CHECKED_KEY, 2):
        raise AssertionError(f"restored count of {CHECKED_KEY}: {sink.record}, expected 2")
    return seconds


async def measure_restores(keys: int, repeat: int, parallelism: int) -> dict[str, float]:
    """Best seconds of each way to restore, over ``repeat`` interleaved rounds."""
    with tempfile.TemporaryDirectory() as folder:
        setup = Setup(Path(folder), keys, parallelism)
        incremental = await checkpoint(setup, incremental=True)
        full = await checkpoint(setup, incremental=False)
        ways = {
            "files": (incremental, True, True),
            "key groups": (incremental, True, False),
            "full": (full, False, True),
        }
        best = dict.fromkeys(ways, math.inf)
        for _ in range(repeat):
            for way, (location, is_incremental, files) in ways.items():
                seconds = await restore(setup, location, incremental=is_incremental, files=files)
                best[way] = min(best[way], seconds)
    return best


def report(best: dict[str, float], keys: int, repeat: int, parallelism: int) -> None:
    print(
        f"restore of {keys:,} keys into RocksDB at parallelism {parallelism} (unchanged), "
        f"best of {repeat}"
    )
    labels = {
        "files": "incremental, files opened as the database",
        "key groups": "incremental, read into key groups",
        "full": "full checkpoint (key groups)",
    }
    for way in WAYS:
        ratio = best[way] / best["files"]
        print(f"{labels[way]:<44}{best[way]:>8.3f} s{ratio:>8.1f} x files")


async def main_restore(keys: int, repeat: int, parallelisms: Sequence[int]) -> None:
    for parallelism in parallelisms:
        report(await measure_restores(keys, repeat, parallelism), keys, repeat, parallelism)
