"""Timestamps on records: what they cost a job without event time (nothing), and how they travel.

``guard``: the keyed running sum (``keyed_sum.py``, both sinks, parallelism 1 and 2) on this
checkout's engine against the same benchmark on a baseline commit's engine (``--baseline``,
by default where this branch left ``main``), the two run alternately in fresh processes,
``--rounds`` times each, timed in CPU time; each run's ratio to the plain-loop floor is
measured within that run, and the medians are compared. Jobs without event time must keep
their ratio within 5%.

``carried``: what carrying timestamps costs where they are read. The keyed running sum
with a pass-through process function after the reduce (a reader of ``ctx.timestamp()``),
once without event time and once with a watermark strategy at the source, so that records
travel as pairs through the map, the reduce and the process function; ratio of the two,
same run, counting sink, parallelism 1 (``event_time.py`` measures event time whose
timestamps nothing reads: watermarks alone).

``representation``: why records travel as ``(timestamp, value)`` pairs where event time is
on: one batch of 512 records through a map, a filter and key routing, as plain values (no
event time), as pairs, and as values with a parallel list of timestamps; ratios to plain.

Run with ``--help`` for flags.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import operator
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import timeit
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import event_time
import keyed_sum
from harness import best_seconds, check_latest, freeze_input, run_floor, run_job

from lockgate.connectors import CollectionSource
from lockgate.engine import (
    KeyedProcessFunction,
    ProcessContext,
    Sink,
    StreamEnvironment,
    WatermarkStrategy,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TOLERANCE = 0.05  # the after/before ratio to the floor stays within 5%
ROW = re.compile(r"^lockgate parallelism=(\d+), (.+?)\s+([\d,]+) ev/s")
FLOOR = re.compile(r"^floor \(plain Python loop\)\s+([\d,]+) ev/s")


def baseline_tree(ref: str, into: Path) -> Path:
    """Extract ``ref`` of this repository into ``into``; return the path to import it from.

    The import path holds ``lockgate/{engine,actors,connectors}`` pointing into the
    extracted tree, so ``PYTHONPATH`` picks the baseline's code before the editable install.
    """
    tree, path = into / "tree", into / "path" / "lockgate"
    tree.mkdir(parents=True)
    path.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    for package in ("engine", "actors", "connectors"):
        (path / package).symlink_to(tree / package)
    return path.parent


def fork_point() -> str:
    """Where this branch left ``main``."""
    run = subprocess.run(
        ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"],
        check=True,
        capture_output=True,
        text=True,
    )
    return run.stdout.strip()


def ratios_of(python_path: Path | None, events: int) -> dict[tuple[int, str], float]:
    """One run of the keyed sum benchmark on the engine ``python_path`` holds (or this one).

    Runs are timed in CPU time (``LOCKGATE_BENCH_CLOCK=cpu``): other sessions on a shared
    machine then shift neither the floor nor the job.
    """
    env = dict(os.environ, LOCKGATE_BENCH_CLOCK="cpu")
    if python_path is not None:
        env["PYTHONPATH"] = str(python_path)
    command = [sys.executable, str(HERE / "keyed_sum.py")]  # this checkout's benchmark
    command += ["--events", str(events), "--repeat", "1", "--parallelism", "1", "2"]
    run = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    rates, floor = {}, None
    for line in run.stdout.splitlines():
        if (match := FLOOR.match(line.strip())) is not None:
            floor = _rate(match[1])
        elif (match := ROW.match(line.strip())) is not None:
            rates[int(match[1]), match[2]] = _rate(match[3])
    if floor is None or not rates:
        raise RuntimeError(f"no rates in the output of {command}:\n{run.stdout}{run.stderr}")
    return {row: rate / floor for row, rate in rates.items()}


def _quartiles(ratios: list[float]) -> str:
    if len(ratios) < 2:
        return f"{ratios[0]:.3f}"
    low, _, high = statistics.quantiles(ratios, n=4)
    return f"{low:.3f}-{high:.3f}"


def _rate(text: str) -> float:
    return float(text.replace(",", ""))


def guard(args: argparse.Namespace) -> int:
    ref = args.baseline or fork_point()
    with tempfile.TemporaryDirectory(prefix="lockgate-baseline-") as folder:
        path = baseline_tree(ref, Path(folder))
        runs: dict[str, dict[tuple[int, str], list[float]]] = {
            "before": defaultdict(list),
            "after": defaultdict(list),
        }
        contenders = {"before": path, "after": None}
        for round_ in range(args.rounds):
            # alternate which goes first, so neither always runs on the warmer machine
            order = list(contenders) if round_ % 2 == 0 else list(reversed(contenders))
            for name in order:
                for row, ratio in ratios_of(contenders[name], args.events).items():
                    runs[name][row].append(ratio)
    print(
        f"keyed running sum, {args.events:,} events, {args.rounds} alternating runs each; "
        f"before = {ref[:12]}, after = this checkout; medians of the ratio to the floor (CPU time)"
    )
    worst = 1.0
    for row in sorted(runs["after"]):
        before, after = (statistics.median(runs[name][row]) for name in ("before", "after"))
        change = after / before
        worst = min(worst, change)
        label = f"parallelism={row[0]}, {row[1]}"
        spread = "  ".join(_quartiles(runs[name][row]) for name in ("before", "after"))
        print(
            f"{label:<32} before {before:.3f}   after {after:.3f}   after/before {change:.3f}"
            f"   (quartiles {spread})"
        )
    verdict = "met" if worst >= 1.0 - TOLERANCE else "NOT met"
    print(f"goal: every row after/before at least {1.0 - TOLERANCE:.2f}: {verdict}")
    return 0


SIZE, KEYS = 512, 4
VALUES = [(i % 100, i) for i in range(SIZE)]
TIMES = [float(i) for i in range(SIZE)]
PAIRS = list(zip(TIMES, VALUES, strict=True))
BUFFERS: list[list[Any]] = [[] for _ in range(KEYS)]
STAMPS: list[list[float]] = [[] for _ in range(KEYS)]


def doubled(value: tuple[int, int]) -> tuple[int, int]:
    return value[0], value[1] * 2


def even(value: tuple[int, int]) -> bool:
    return value[1] % 2 == 0


def key_of(value: tuple[int, int]) -> int:
    return value[0]


def map_plain() -> object:
    return [doubled(v) for v in VALUES]


def map_pairs() -> object:
    return [(t, doubled(v)) for t, v in PAIRS]


def map_parallel() -> object:
    return [doubled(v) for v in VALUES], TIMES


def filter_plain() -> object:
    return [v for v in VALUES if even(v)]


def filter_pairs() -> object:
    return [p for p in PAIRS if even(p[1])]


def filter_parallel() -> object:
    kept = [even(v) for v in VALUES]
    return list(itertools.compress(VALUES, kept)), list(itertools.compress(TIMES, kept))


def route_plain() -> None:
    append = [buffer.append for buffer in BUFFERS]
    for value in VALUES:
        append[key_of(value) % KEYS](value)
    for buffer in BUFFERS:
        buffer.clear()


def route_pairs() -> None:
    append = [buffer.append for buffer in BUFFERS]
    for pair in PAIRS:
        append[key_of(pair[1]) % KEYS](pair)
    for buffer in BUFFERS:
        buffer.clear()


def route_parallel() -> None:
    append = [buffer.append for buffer in BUFFERS]
    append_time = [stamp.append for stamp in STAMPS]
    for value, time in zip(VALUES, TIMES, strict=True):
        target = key_of(value) % KEYS
        append[target](value)
        append_time[target](time)
    for buffer in itertools.chain(BUFFERS, STAMPS):
        buffer.clear()


CASES: dict[str, dict[str, Callable[[], object]]] = {
    "map": {"plain": map_plain, "pairs": map_pairs, "parallel lists": map_parallel},
    "filter": {"plain": filter_plain, "pairs": filter_pairs, "parallel lists": filter_parallel},
    "key routing": {"plain": route_plain, "pairs": route_pairs, "parallel lists": route_parallel},
}


def representation(args: argparse.Namespace) -> int:
    best: dict[tuple[str, str], float] = defaultdict(lambda: float("inf"))
    for _ in range(args.repeat):  # rounds interleave the ways: a burst of load hits all
        for step, ways in CASES.items():
            for way, run in ways.items():
                best[step, way] = min(best[step, way], timeit.timeit(run, number=50))
    print(f"one batch of {SIZE} records, best of {args.repeat} rounds of 50 batches; time / plain")
    for step, ways in CASES.items():
        plain = best[step, "plain"]
        shown = "   ".join(f"{way} {best[step, way] / plain:.2f}" for way in ways)
        print(f"{step:<12} {shown}")
    return 0


class PassThrough(KeyedProcessFunction[Any, Any, Any]):
    """Emits each record as it came: a reader of timestamps that does nothing with them."""

    def process_element(self, value: Any, ctx: ProcessContext[Any]) -> list[Any]:
        return [value]


def carried_job(events: list[Any], strategy: WatermarkStrategy | None) -> Any:
    def add_job(env: StreamEnvironment, sink: Sink[Any]) -> None:
        (
            env.from_source(CollectionSource(events), uid="events", watermark_strategy=strategy)
            .map(keyed_sum.doubled, uid="doubled")
            .key_by(keyed_sum.key_of)
            .reduce(keyed_sum.add, uid="sums")
            .key_by(keyed_sum.key_of)
            .process(PassThrough(), uid="reads")
            .sink_to(sink, uid="count")
        )

    return add_job


def carried(args: argparse.Namespace) -> int:
    events = event_time.timed_events(args.events)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(100.0).with_timestamp_assigner(
        operator.itemgetter(2)
    )
    plain = dataclasses.replace(
        keyed_sum.workload(0),
        title="keyed running sum and a process function",
        floor=lambda: keyed_sum.floor(events),  # type: ignore[arg-type]
        build=carried_job(events, None),
        expected_records=args.events,
    )
    contenders = {
        "processing time (no timestamps)": plain,
        "event time, timestamps carried": dataclasses.replace(
            plain, build=carried_job(events, strategy)
        ),
    }
    freeze_input()
    state = run_floor(plain)
    for workload in contenders.values():
        check_latest(workload, 1, state)
    seconds = best_seconds(
        args.repeat_jobs,
        {name: functools.partial(run_job, workload, 1) for name, workload in contenders.items()},
    )
    base = seconds["processing time (no timestamps)"]
    print(f"{plain.title}, {args.events:,} events, parallelism 1, best of {args.repeat_jobs}")
    for name, taken in seconds.items():
        print(f"{name:<36} {args.events / taken:>12,.0f} ev/s   {base / taken:.2f} x")
    return 0


def main() -> int:
    flags = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    flags.add_argument(
        "--sections",
        nargs="+",
        choices=["guard", "carried", "representation"],
        default=["guard", "carried", "representation"],
    )
    flags.add_argument(
        "--baseline", help="the git ref to compare with (default: the fork point from main)"
    )
    flags.add_argument("--rounds", type=int, default=21, help="runs of each tree in the guard")
    flags.add_argument("--events", type=int, default=500_000, help="events per keyed sum run")
    flags.add_argument("--repeat", type=int, default=200, help="rounds of the representation cases")
    flags.add_argument("--repeat-jobs", type=int, default=3, help="runs per job in 'carried'")
    args = flags.parse_args()
    status = 0
    if "guard" in args.sections:
        status |= guard(args)
    if "carried" in args.sections:
        status |= carried(args)
    if "representation" in args.sections:
        status |= representation(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
