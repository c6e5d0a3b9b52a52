"""Windows before and after a change: the same window jobs on this tree and on a git revision.

``--base REV`` is unpacked with ``git archive`` into a temporary folder, whose packages a
child process imports instead of this tree's (a ``lockgate`` folder of links on
``PYTHONPATH`` comes before the editable install). Each job then runs in a fresh child
process per tree and round, the trees interleaved, and reports the CPU seconds its run took
(``time.process_time``: on a shared machine the wall clock measures the neighbours too).
Per job the smallest of ``--repeat`` rounds is kept, and the ratio this tree / base printed:
below 1.00 this tree is faster. The jobs use only API both trees have:

- ``tumbling aggregate`` / ``tumbling process``: 1-second tumbling event-time windows
  summing values per key, with an ``AggregateFunction`` / a ``ProcessWindowFunction``;
- ``sliding aggregate``: 4-second windows every second;
- ``session aggregate``: sessions with a 1-second gap, a pause every 10,000 events;
- ``count trigger``: ``GlobalWindows`` fired by ``CountTrigger.of(100)``.

Events ``(key, time, value)``: 100 keys, 10,000 per second of event time, in order.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
JOBS = ("tumbling aggregate", "tumbling process", "sliding aggregate", "session aggregate")
JOBS += ("count trigger",)


def events(count: int, job: str) -> list[tuple[int, float, int]]:
    """``count`` events in time order; sessions get a 5-second pause every 10,000."""
    pause = 5.0 if job == "session aggregate" else 0.0
    return [(i % 100, i / 10_000 + (i // 10_000) * pause, i % 100) for i in range(count)]


def run_job(job: str, count: int) -> float:
    """Run ``job`` over ``count`` events in this process; return its CPU seconds."""
    from lockgate.connectors import CollectionSource
    from lockgate.engine import (
        AggregateFunction,
        CountTrigger,
        EventTimeSessionWindows,
        GlobalWindows,
        ProcessWindowFunction,
        SlidingEventTimeWindows,
        StreamEnvironment,
        TumblingEventTimeWindows,
        WatermarkStrategy,
        run,
    )

    sys.path.insert(0, str(Path(__file__).parent))
    from harness import CountingSink

    class Sum(AggregateFunction[Any, int, int]):
        def create_accumulator(self) -> int:
            return 0

        def add(self, value: Any, accumulator: int) -> int:
            return accumulator + value[2]

        def get_result(self, accumulator: int) -> int:
            return accumulator

        def merge(self, a: int, b: int) -> int:
            return a + b

    class SumAll(ProcessWindowFunction[Any, int, int]):
        def process(self, key: int, context: Any, elements: list[Any]) -> list[int]:
            return [sum(event[2] for event in elements)]

    by_time = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        operator.itemgetter(1)
    )
    assigners = {
        "tumbling aggregate": TumblingEventTimeWindows.of(1.0),
        "tumbling process": TumblingEventTimeWindows.of(1.0),
        "sliding aggregate": SlidingEventTimeWindows.of(4.0, 1.0),
        "session aggregate": EventTimeSessionWindows.with_gap(1.0),
    }
    all_events = events(count, job)

    async def execute() -> None:
        env = StreamEnvironment(parallelism=1)
        source = CollectionSource(all_events)
        keyed = env.from_source(source, uid="events", watermark_strategy=by_time).key_by(
            operator.itemgetter(0)
        )
        if job == "count trigger":
            windowed = keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(100))
        else:
            windowed = keyed.window(assigners[job])
        stream = windowed.process(SumAll(), uid="w") if "process" in job else None
        stream = stream or windowed.aggregate(Sum(), uid="w")
        stream.sink_to(CountingSink(), uid="out")
        await env.execute("windows")

    started = time.process_time()
    run(execute)
    return time.process_time() - started


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
    flags.add_argument("--base", default="HEAD", help="the git revision to compare against")
    flags.add_argument("--events", type=int, default=200_000, help="input events per job")
    flags.add_argument("--repeat", type=int, default=3, help="rounds; the smallest is kept")
    flags.add_argument("--jobs", nargs="+", default=list(JOBS), choices=JOBS, metavar="JOB")
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
            for job in args.jobs:
                for tree, path in (("base", base), ("this tree", None)):
                    taken.setdefault((job, tree), []).append(child(job, args.events, path))
    print(
        f"window jobs, {args.events:,} events, CPU seconds, smallest of {args.repeat} "
        f"interleaved rounds; base {args.base}"
    )
    for job in args.jobs:
        before, after = min(taken[job, "base"]), min(taken[job, "this tree"])
        print(f"{job:<20} base {before:6.3f} s   this tree {after:6.3f} s   {after / before:.2f} x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
