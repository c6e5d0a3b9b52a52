"""Watermark generators: what this tree's generators cost, against a git revision and itself.

Two comparisons, each printed as a ratio measured in the same run:

- **Before and after** (``--base REV``, default ``main``): the same event-time jobs on this
  tree and on ``REV``, unpacked with ``git archive`` into a temporary folder whose packages
  a child process imports instead of this tree's. Each job runs in a fresh child process
  per tree and round, the trees interleaved, and reports the CPU seconds of its run
  (``time.process_time``: on a shared machine the wall clock measures the neighbours too);
  per job the smallest of ``--repeat`` rounds is kept and ``this tree / base`` printed.
  The jobs use only API both trees have, and no punctuated generator: they show what
  periodic watermarks cost now.
    - ``periodic map``: a source with ``for_monotonous_timestamps`` (watermarks every 0.2 s),
      a map and a counting sink, the source chain doing nothing but the watermarks' work;
    - ``periodic window``: the same source keyed into 1-second tumbling windows summing;
    - ``four splits``: a source of four splits whose reader reads by split
      (``read_splits``, ignored by a base without per-split watermarks), into a map:
      on this tree a generator per split, on the base one per subtask;
    - ``no event time``: the map job without a strategy (a control: nothing changed there).
  Goal: the jobs that use nothing new (``UNCHANGED``) at most ``GOAL`` x the base.
- **Punctuated against periodic** (this tree only): the ``periodic map`` job, and the same
  with a punctuated generator that emits after every record (``every record``) or after
  every 512th (``every 512th``), at the default batch size of 512.

Events ``(key, time, value)``: 100 keys, 10,000 per second of event time, in order.
Run with ``--help`` for flags.
"""

from __future__ import annotations

import argparse
import operator
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Generic, TypeVar

from lockgate.connectors import CollectionSource
from lockgate.engine import (
    Source,
    SourceContext,
    SourceReader,
    SourceSplit,
    StreamEnvironment,
    TumblingEventTimeWindows,
    Watermark,
    WatermarkStrategy,
    run,
)

sys.path.insert(0, str(Path(__file__).parent))
from harness import CountingSink

T = TypeVar("T")

try:  # a base revision may have neither: its jobs use neither
    from lockgate.engine import SplitRecords, WatermarkGenerator
except ImportError:  # a base before watermark generators

    class WatermarkGenerator(Generic[T]):  # type: ignore[no-redef]
        """Stands in for the name on a base, where no job uses it."""

    SplitRecords = None  # type: ignore[assignment,misc]

ROOT = Path(__file__).resolve().parent.parent
BOTH_TREES = ("periodic map", "periodic window", "four splits", "no event time")
THIS_TREE = ("every record", "every 512th")
JOBS = BOTH_TREES + THIS_TREE
UNCHANGED = ("periodic map", "periodic window", "no event time")  # jobs that must pay nothing
GOAL = 1.05


def events(count: int) -> list[tuple[int, float, int]]:
    """``count`` events in time order."""
    return [(i % 100, i / 10_000, i % 100) for i in range(count)]


def run_job(job: str, count: int) -> float:
    """Run ``job`` over ``count`` events in this process; return its CPU seconds."""
    all_events = events(count)
    sink = CountingSink()

    async def execute() -> None:
        env = StreamEnvironment(parallelism=1)
        source = SplitSource(all_events) if job == "four splits" else CollectionSource(all_events)
        stream = env.from_source(source, uid="events", watermark_strategy=strategy_of(job))
        if job == "periodic window":
            windows = stream.key_by(operator.itemgetter(0)).window(TumblingEventTimeWindows.of(1.0))
            out = windows.reduce(lambda a, b: (a[0], a[1], a[2] + b[2]), uid="w")
        else:
            out = stream.map(operator.itemgetter(2), uid="values")
        out.sink_to(sink, uid="out")
        await env.execute("watermarks")

    started = time.process_time()
    run(execute)
    seconds = time.process_time() - started
    expected = 100 * -(-count // 10_000) if job == "periodic window" else count
    if sink.count != expected:  # windows: one result per key and second of event time
        raise SystemExit(f"the {job!r} job gave {sink.count} results; expected {expected}")
    return seconds


def strategy_of(job: str) -> WatermarkStrategy | None:
    """The job's watermark strategy (``None``: processing time)."""
    if job == "no event time":
        return None
    if job in THIS_TREE:
        every = 1 if job == "every record" else 512
        strategy = WatermarkStrategy.for_generator(lambda context: Punctuated(every))
    else:
        strategy = WatermarkStrategy.for_monotonous_timestamps()
    return strategy.with_timestamp_assigner(operator.itemgetter(1))


class Punctuated(WatermarkGenerator[Any]):
    """A watermark at the event's time after every ``every`` events."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.seen = 0

    def on_event(self, event: Any, timestamp: float, output: Any) -> None:
        self.seen += 1
        if self.seen % self.every == 0:
            output.emit_watermark(Watermark(timestamp))


class SplitSource(Source[Any]):
    """Four splits of the events, every fourth one each; a read takes a run of each."""

    def __init__(self, all_events: list[Any]) -> None:
        self.events = all_events

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(str(index), 0) for index in range(4)]

    def create_reader(self, splits: Any, context: SourceContext) -> SourceReader[Any]:
        return SplitReader(self.events, list(splits))


class SplitReader(SourceReader[Any]):
    def __init__(self, all_events: list[Any], splits: list[SourceSplit]) -> None:
        self.logs = {s.split_id: all_events[int(s.split_id) :: 4] for s in splits}
        self.positions = {s.split_id: s.position for s in splits}

    async def read(self, max_records: int) -> list[Any]:
        return [record for _, records in self.runs(max_records) for record in records]

    async def read_splits(self, max_records: int) -> list[Any]:  # never called by a base
        return [SplitRecords(split, records) for split, records in self.runs(max_records)]

    def runs(self, max_records: int) -> list[tuple[str, list[Any]]]:
        found = []
        for split, log in self.logs.items():
            start = self.positions[split]
            taken = log[start : start + max(1, max_records // 4)]
            self.positions[split] = start + len(taken)
            if taken:
                found.append((split, taken))
        return found

    def snapshot_splits(self) -> list[SourceSplit]:
        return [SourceSplit(split, position) for split, position in self.positions.items()]


def unpack(revision: str, into: Path) -> Path:
    """``revision`` of this repository in ``into``; return the folder to put on PYTHONPATH."""
    source, path = into / "src", into / "path" / "lockgate"
    source.mkdir(parents=True)
    path.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True)
    for package in ("engine", "actors", "connectors"):
        (path / package).symlink_to(source / package)
    return path.parent


def child(job: str, count: int, python_path: Path | None) -> float:
    """Run ``job`` in a fresh process on this tree, or the one on ``python_path``."""
    environment = dict(os.environ)
    if python_path is not None:
        environment["PYTHONPATH"] = str(python_path)
    command = [sys.executable, __file__, "--run", job, "--events", str(count)]
    done = subprocess.run(command, env=environment, check=True, capture_output=True, text=True)
    seconds, imported = done.stdout.split()
    expected = ROOT if python_path is None else python_path
    if not Path(imported).is_relative_to(expected):
        raise SystemExit(f"the {job!r} run imported {imported}, not the tree under {expected}")
    return float(seconds)


def main() -> int:
    flags = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    flags.add_argument("--base", default="main", help="the git revision to compare against")
    flags.add_argument("--events", type=int, default=500_000, help="input events per job")
    flags.add_argument("--repeat", type=int, default=5, help="rounds; the smallest is kept")
    flags.add_argument("--run", help=argparse.SUPPRESS)
    args = flags.parse_args()
    if args.run:
        import lockgate.engine

        print(run_job(args.run, args.events), lockgate.engine.__file__)
        return 0
    with tempfile.TemporaryDirectory() as folder:
        base = unpack(args.base, Path(folder))
        taken: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.repeat):
            for job in JOBS:
                trees = (("base", base), ("this tree", None)) if job in BOTH_TREES else ()
                for tree, path in trees or (("this tree", None),):
                    taken.setdefault((job, tree), []).append(child(job, args.events, path))
    best = {key: min(seconds) for key, seconds in taken.items()}
    print(
        f"watermark generators, {args.events:,} events, CPU seconds, smallest of "
        f"{args.repeat} interleaved rounds; base {args.base}"
    )
    for job in BOTH_TREES:
        before, after = best[job, "base"], best[job, "this tree"]
        print(f"{job:<16} base {before:6.3f} s   this tree {after:6.3f} s   {after / before:.2f} x")
    periodic = best["periodic map", "this tree"]
    for job in THIS_TREE:
        seconds = best[job, "this tree"]
        print(f"{job:<16} {seconds:6.3f} s   {seconds / periodic:.2f} x periodic map")
    worst = max(best[job, "this tree"] / best[job, "base"] for job in UNCHANGED)
    met = "met" if worst <= GOAL else "NOT met"
    print(f"goal: {', '.join(UNCHANGED)} at most {GOAL:.2f} x base: {met} ({worst:.2f} x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
