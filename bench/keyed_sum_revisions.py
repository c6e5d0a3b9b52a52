"""The keyed running sum before and after a change: bench/keyed_sum.py on this tree and a revision.

``--base REV`` is unpacked with ``git archive`` (as ``window_revisions.py`` does) and a child
process imports its packages instead of this tree's. Each round runs the job of
``keyed_sum.py`` (events ``(i % 10_000, i % 100)``, ``map`` -> ``key_by`` -> ``reduce`` -> a
counting sink) once per tree in a fresh child process, the trees interleaved (each goes
first every other round), and reads the CPU seconds the run took (``time.process_time``: on
a shared machine the wall clock measures the neighbours too). The smallest of ``--repeat``
rounds is kept per tree, and the ratio this tree / base printed: below 1.00 this tree is
faster. ``--base HEAD`` with a clean tree is the A/A run that shows the noise.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from window_revisions import ROOT, unpack


def run_job(count: int, parallelism: int) -> float:
    """Run the keyed running sum over ``count`` events here; return its CPU seconds."""
    from harness import CountingSink
    from keyed_sum import build, key_of

    from lockgate.engine import StreamEnvironment, run

    events = [(i % 10_000, i % 100) for i in range(count)]
    env = StreamEnvironment(parallelism=parallelism)
    sink = CountingSink(latest_by=key_of)
    build(env, sink, events)
    started = time.process_time()
    run(env.execute, "keyed sum")
    seconds = time.process_time() - started
    if sink.count != count:
        raise SystemExit(f"the sink counted {sink.count:,} records; expected {count:,}")
    return seconds


def child(count: int, parallelism: int, python_path: Path | None) -> float:
    environment = dict(os.environ)
    if python_path is not None:
        environment["PYTHONPATH"] = str(python_path)
    command = [sys.executable, __file__, "--run", "--events", str(count)]
    command += ["--parallelism", str(parallelism)]
    done = subprocess.run(command, env=environment, check=True, capture_output=True, text=True)
    seconds, imported = done.stdout.split()
    expected = ROOT if python_path is None else python_path
    if not Path(imported).is_relative_to(expected):
        raise SystemExit(f"the run imported {imported}, not the tree under {expected}")
    return float(seconds)


def main() -> int:
    flags = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    flags.add_argument("--base", default="HEAD", help="the git revision to compare against")
    flags.add_argument("--events", type=int, default=1_000_000, help="input events per run")
    flags.add_argument("--parallelism", type=int, default=1)
    flags.add_argument("--repeat", type=int, default=5, help="rounds; the smallest is kept")
    flags.add_argument("--run", action="store_true", help=argparse.SUPPRESS)
    args = flags.parse_args()
    if args.run:
        import lockgate.engine

        print(run_job(args.events, args.parallelism), lockgate.engine.__file__)
        return 0
    taken: dict[str, list[float]] = {"base": [], "this tree": []}
    with tempfile.TemporaryDirectory() as folder:
        base = unpack(args.base, Path(folder))
        trees: list[tuple[str, Path | None]] = [("base", base), ("this tree", None)]
        for _ in range(args.repeat):
            for tree, path in trees:
                taken[tree].append(child(args.events, args.parallelism, path))
            trees.reverse()  # each tree goes first every other round
    before, after = min(taken["base"]), min(taken["this tree"])
    print(
        f"keyed running sum, {args.events:,} events, parallelism {args.parallelism}, CPU "
        f"seconds, smallest of {args.repeat} interleaved rounds; base {args.base}"
    )
    print(f"base {before:6.3f} s   this tree {after:6.3f} s   {after / before:.3f} x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
