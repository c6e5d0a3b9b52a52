"""Snapshots of 1,000,000 keys: the synchronous part, and the event loop's longest stall.

A reduce holds one value per key for ``--keys`` keys in an idle job (``checkpoints.py``'s
``KeysThenIdle``), and checkpoints to filesystem storage are triggered into it one at a time.
Each round measures two jobs, interleaved: the memory backend as it is, whose snapshot
freezes each state's layers as a version (O(states)), and the path it replaced, kept as
``KeyedStateStore.snapshot(copy=True)``: one shallow dict copy per state (O(keys)). Printed,
per path: the keyed snapshot call itself, the subtask's synchronous part (as the checkpoint's
statistics report it: the snapshots of every operator, the sink's pre-commit and passing the
barrier on), and the largest lateness of a 1 ms sleep on the loop (``LoopLagMonitor``) from
the trigger until the checkpoint completed (what the asynchronous part, in a worker thread,
costs the loop too), twice: by the wall clock, and counted only as far as the process's CPU
time grew meanwhile (``busy``: the process's own stall; a wait for a machine that other
processes keep busy hardly counts); and the same largest lateness over as long a time right
after, the job idle: what the machine itself costs the loop. Medians over every checkpoint
of every round, against the goals of issue 19: the synchronous part under 5 ms, the longest
stall under 20 ms. Run with ``--help`` for flags.
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import keyed_sum
from checkpoints import KeysThenIdle, LoadSink

from lockgate.engine import JobClient, StreamEnvironment, run
from lockgate.engine.state import KeyedStateSnapshot, KeyedStateStore
from lockgate.engine.testing import LoopLag, LoopLagMonitor

SYNC_GOAL = 0.005  # seconds: the synchronous part of a snapshot of 1,000,000 keys (issue 19)
STALL_GOAL = 0.020  # seconds: the event loop's longest stall during the whole checkpoint
PATHS = ("versions", "copies")
LABEL_WIDTH = 26


@dataclass
class Samples:
    """What one path's checkpoints measured, in seconds, over every round."""

    snapshot_call: list[float] = field(default_factory=list)
    sync_part: list[float] = field(default_factory=list)
    stall: list[float] = field(default_factory=list)
    busy_stall: list[float] = field(default_factory=list)
    duration: list[float] = field(default_factory=list)
    idle_stall: list[float] = field(default_factory=list)
    idle_busy_stall: list[float] = field(default_factory=list)


@contextmanager
def snapshots_of(path: str, calls: list[float]) -> Iterator[None]:
    """Take keyed snapshots by ``path`` inside the block, timing each call into ``calls``."""
    original = KeyedStateStore.snapshot
    copying = path == "copies"

    @functools.wraps(original)
    def timed(store: KeyedStateStore, *, copy: bool = False) -> KeyedStateSnapshot:
        started = time.perf_counter()
        snapshot = original(store, copy=copy or copying)
        calls.append(time.perf_counter() - started)
        return snapshot

    KeyedStateStore.snapshot = timed  # type: ignore[method-assign]
    try:
        yield
    finally:
        KeyedStateStore.snapshot = original  # type: ignore[method-assign]


def measure(path: str, keys: int, storage: str, count: int, samples: Samples) -> None:
    """Load ``keys`` keys into a job on ``path``, then checkpoint it ``count`` times."""
    calls: list[float] = []
    with snapshots_of(path, calls):
        run(_checkpoints, keys, storage, count, samples)
    assert len(calls) == count, f"one keyed snapshot per checkpoint; got {len(calls)}"
    samples.snapshot_call.extend(calls)


async def _checkpoints(keys: int, storage: str, count: int, samples: Samples) -> None:
    env = StreamEnvironment()
    env.set_checkpoint_storage(storage)
    sink = LoadSink(keys)
    (
        env.from_source(KeysThenIdle(keys), uid="keys")
        .key_by(keyed_sum.key_of)
        .reduce(keyed_sum.add, uid="sums")
        .sink_to(sink, uid="count")
    )
    async with env.start(f"snapshot-{keys}") as job:  # leaving the block cancels the job
        await sink.wait_loaded()
        await _trigger(job, count, samples)


async def _trigger(job: JobClient, count: int, samples: Samples) -> None:
    async with LoopLagMonitor() as lag:
        for _ in range(count):
            gc.collect()  # a collection the loading owes would otherwise land in the window
            lag.reset()
            completed = await job.trigger_checkpoint()
            during = await _including_the_wake_up_in_flight(lag)
            assert completed.statistics is not None, "a completed checkpoint has statistics"
            samples.sync_part.append(completed.statistics.sync_duration)
            samples.duration.append(completed.statistics.duration)
            samples.stall.append(during.max)
            samples.busy_stall.append(during.busy_max)
            lag.reset()  # the machine's own noise, over as long a time
            await anyio.sleep(completed.statistics.duration)
            idle = await _including_the_wake_up_in_flight(lag)
            samples.idle_stall.append(idle.max)
            samples.idle_busy_stall.append(idle.busy_max)


async def _including_the_wake_up_in_flight(lag: LoopLagMonitor) -> LoopLag:
    # A stall that ends the measured window is measured by the next wake-up.
    await lag.wait_measured(lag.statistics().samples + 1)
    return lag.statistics()


def print_report(keys: int, rounds: int, count: int, measured: dict[str, Samples]) -> None:
    """Print the medians (and ranges) of both paths, their ratio, and the goals."""
    print(f"snapshot of {keys:,} keys in an idle job, filesystem storage")
    print(f"    {rounds} interleaved rounds x {count} checkpoints per path; medians [min-max]")
    print(f"    {'':<{LABEL_WIDTH}}{'versions (now)':>28}{'copies (before)':>28}{'ratio':>8}")
    rows: tuple[tuple[str, Callable[[Samples], list[float]]], ...] = (
        ("keyed snapshot call", lambda s: s.snapshot_call),
        ("synchronous part", lambda s: s.sync_part),
        ("longest loop stall", lambda s: s.stall),
        ("  of it, busy", lambda s: s.busy_stall),
        ("  idle, as long, after it", lambda s: s.idle_stall),
        ("  idle, busy", lambda s: s.idle_busy_stall),
        ("checkpoint duration", lambda s: s.duration),
    )
    for label, values_of in rows:
        now, before = values_of(measured["versions"]), values_of(measured["copies"])
        ratio = statistics.median(now) / statistics.median(before)
        print(f"    {label:<{LABEL_WIDTH}}{_ms(now):>28}{_ms(before):>28}{ratio:>7.2f}x")
    now = measured["versions"]
    for goal, name, values in (
        (SYNC_GOAL, "synchronous part", now.sync_part),
        (STALL_GOAL, "longest stall", now.stall),
        (STALL_GOAL, "longest stall, busy", now.busy_stall),
    ):
        print(f"    goal: {name} under {goal * 1000:.0f} ms: {_verdict(values, goal)}")


def _ms(values: list[float]) -> str:
    median, low, high = statistics.median(values), min(values), max(values)
    return f"{median * 1000:.2f} [{low * 1000:.1f}-{high * 1000:.1f}] ms"


def _verdict(values: list[float], goal: float) -> str:
    median, worst = statistics.median(values), max(values)
    verdict = "met" if median < goal else "NOT met"
    return f"{verdict} (median {median * 1000:.2f} ms; worst {worst * 1000:.2f} ms)"


def main() -> int:
    flags = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    flags.add_argument("--keys", type=int, default=1_000_000, help="keys in the reduce's state")
    flags.add_argument("--rounds", type=int, default=2, help="interleaved rounds of both paths")
    flags.add_argument("--checkpoints", type=int, default=3, help="checkpoints per job")
    args = flags.parse_args()
    measured = {path: Samples() for path in PATHS}
    with tempfile.TemporaryDirectory(prefix="lockgate-bench-") as folder:
        for round_ in range(args.rounds):
            for path in PATHS:
                storage = (Path(folder) / f"{path}-{round_}").as_uri()
                measure(path, args.keys, storage, args.checkpoints, measured[path])
    print_report(args.keys, args.rounds, args.checkpoints, measured)
    return 0


if __name__ == "__main__":
    sys.exit(main())
