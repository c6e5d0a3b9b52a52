"""The keyed running sum before and after a change: this tree against a git revision.

The job of ``keyed_sum.py`` (``--events`` events over 10,000 keys, parallelism 1, a counting
sink, or with ``--sink collect`` a ``CollectSink``), once without checkpoints and once with
``--checkpoints`` exactly-once checkpoints to memory storage, triggered
(``JobClient.trigger_checkpoint``) as the sink's count passes evenly spaced thresholds, so
that snapshots' versions and their folds happen while records flow, and every run takes the
same checkpoints (a periodic one takes as many as the wall clock allows, and a run slowed by
the machine would pay for more of them). ``--base REV`` is unpacked with ``git archive``
(``window_revisions.unpack``) and imported by child processes instead of this tree; each run
is a fresh child, the trees interleaved round by round, and reports the CPU seconds of its
run (``time.process_time``: on a shared machine the wall clock measures the neighbours too).
Printed per job: the median and the smallest of ``--repeat`` rounds per tree, and the median
of the rounds' ratios, this tree / base (each round runs both trees back to back, so a burst
of load elsewhere lands on both): below 1.00 this tree is faster. The per-record write check
of the memory backend's versions is meant to cost at most 3% (issue 19).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from window_revisions import ROOT, unpack

JOBS = ("no checkpoints", "triggered checkpoints")
GOAL = 1.03  # this tree / base, medians of CPU seconds (issue 19: within 3%)


def run_job(job: str, count: int, checkpoints: int, sink_name: str) -> tuple[float, int]:
    """Run ``job`` over ``count`` events here; return its CPU seconds and checkpoints taken."""
    sys.path.insert(0, str(Path(__file__).parent))
    import keyed_sum
    from passing_sink import PassingCollectSink, PassingSink

    from lockgate.engine import CheckpointingMode, StreamEnvironment, run

    events = [(i % keyed_sum.KEYS, i % 100) for i in range(count)]
    sink = PassingCollectSink() if sink_name == "collect" else PassingSink()

    async def without_checkpoints() -> int:
        env = StreamEnvironment(parallelism=1)
        keyed_sum.build(env, sink, events)
        result = await env.execute("keyed-sum")
        return int(result.metrics.checkpoints.completed)

    async def triggering_checkpoints() -> int:
        env = StreamEnvironment(parallelism=1)
        env.enable_checkpointing(3600.0, mode=CheckpointingMode.EXACTLY_ONCE)  # none periodic
        keyed_sum.build(env, sink, events)
        thresholds = [count * (n + 1) // (checkpoints + 2) for n in range(checkpoints)]
        async with env.start("keyed-sum") as client:
            for threshold in thresholds:
                await sink.wait_passed(threshold)
                await client.trigger_checkpoint()
            result = await client.wait()
        return int(result.metrics.checkpoints.completed)

    started = time.process_time()
    taken = run(without_checkpoints if job == JOBS[0] else triggering_checkpoints)
    seconds = time.process_time() - started
    assert sink.count == count, f"{sink.count} of {count} records arrived"
    if isinstance(sink, PassingCollectSink):
        assert len(sink.results) == count, f"{len(sink.results)} of {count} records committed"
    return seconds, taken


def child(job: str, args: argparse.Namespace, python_path: Path | None) -> tuple[float, int]:
    """Run ``job`` in a new process on this tree (``None``) or the tree at ``python_path``."""
    environment = dict(os.environ)
    if python_path is not None:
        environment["PYTHONPATH"] = str(python_path)
    command = [sys.executable, __file__, "--run", job, "--events", str(args.events)]
    command += ["--checkpoints", str(args.checkpoints), "--sink", args.sink]
    done = subprocess.run(command, env=environment, check=True, capture_output=True, text=True)
    seconds, checkpoints, imported = done.stdout.split()
    expected = ROOT if python_path is None else python_path
    if not Path(imported).is_relative_to(expected):
        raise SystemExit(f"the {job!r} run imported {imported}, not the tree under {expected}")
    return float(seconds), int(checkpoints)


def main() -> int:
    flags = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    flags.add_argument("--base", default="HEAD", help="the git revision to compare against")
    flags.add_argument("--events", type=int, default=2_000_000, help="input events per run")
    flags.add_argument("--repeat", type=int, default=7, help="interleaved rounds per tree")
    flags.add_argument("--checkpoints", type=int, default=10, help="checkpoints per run")
    flags.add_argument(
        "--sink", choices=("counting", "collect"), default="counting", help="the job's sink"
    )
    flags.add_argument("--run", help=argparse.SUPPRESS)
    args = flags.parse_args()
    if args.run:
        import lockgate.engine

        taken_here = run_job(args.run, args.events, args.checkpoints, args.sink)
        print(*taken_here, lockgate.engine.__file__)
        return 0
    taken: dict[tuple[str, str], list[tuple[float, int]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        base = unpack(args.base, Path(folder))
        for round_ in range(args.repeat):
            trees = (("base", base), ("this tree", None))
            for tree, path in trees if round_ % 2 == 0 else reversed(trees):
                for job in JOBS:
                    taken.setdefault((job, tree), []).append(child(job, args, path))
    print(
        f"keyed running sum, {args.events:,} events, parallelism 1, {args.sink} sink; CPU seconds "
        f"of {args.repeat} interleaved rounds per tree, median [smallest]; base {args.base}"
    )
    for job in JOBS:
        before, after = (taken[job, tree] for tree in ("base", "this tree"))
        ratio = statistics.median(a / b for (a, _), (b, _) in zip(after, before, strict=True))
        verdict = "met" if ratio <= GOAL else "NOT met"
        print(
            f"    {job:<26} base {_seconds(before)}   this tree {_seconds(after)}   "
            f"{ratio:.3f} x   goal at most {GOAL:.2f} x: {verdict}"
        )
    print("    (checkpoints: the median completed per run; each costs its keys' stable hashes)")
    return 0


def _median(runs: list[tuple[float, int]]) -> float:
    return statistics.median(seconds for seconds, _ in runs)


def _seconds(runs: list[tuple[float, int]]) -> str:
    fastest = min(seconds for seconds, _ in runs)
    checkpoints = statistics.median(count for _, count in runs)
    return f"{_median(runs):6.3f} [{fastest:6.3f}] s, {checkpoints:g} checkpoints"


if __name__ == "__main__":
    sys.exit(main())
