"""Executors before and after a change: bench/executors.py's runs on this tree and a revision.

``--base REV`` is unpacked with ``git archive`` (as bench/window_revisions.py does) and put
first on ``PYTHONPATH`` of a child process, whose worker processes inherit it, so that the
driving process and its workers import the same tree. Each run is a fresh child per tree,
contender and round, the trees interleaved; per tree and contender the run with the
smallest total time of ``--repeat`` is kept. Printed: total / running / cpu seconds as
bench/executors.py defines them, and this tree's running and CPU seconds over the base's
(below 1.00: this tree is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from executors import CONTENDERS, WORKLOADS, Timing
from window_revisions import ROOT, unpack

BENCH = Path(__file__).resolve().parent / "executors.py"


def child(workload: str, contender: str, records: int, python_path: Path | None) -> Timing:
    """One run in a fresh process on the tree at ``python_path`` (``None``: this tree)."""
    environment = dict(os.environ)
    if python_path is not None:
        environment["PYTHONPATH"] = str(python_path)
    command = [sys.executable, str(BENCH), "--child", workload, contender]
    command += ["--records", str(records)]
    done = subprocess.run(command, env=environment, check=True, capture_output=True, text=True)
    figures, imported = done.stdout.split()
    expected = ROOT if python_path is None else python_path
    if not Path(imported).is_relative_to(expected):
        raise SystemExit(f"the {workload!r} run imported {imported}, not the tree at {expected}")
    return Timing(**json.loads(figures))


def main() -> int:
    flags = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    flags.add_argument("--base", default="HEAD", help="the git revision to compare against")
    flags.add_argument("--records", type=int, default=1_000_000)
    flags.add_argument("--repeat", type=int, default=3, help="rounds; the best total is kept")
    flags.add_argument("--workloads", nargs="+", default=["keyed-sum", "word-count"])
    flags.add_argument("--contenders", nargs="+", default=[c.name for c in CONTENDERS])
    args = flags.parse_args()
    unknown = set(args.workloads) - set(WORKLOADS)
    if unknown:
        raise SystemExit(f"unknown workloads {sorted(unknown)}; choose from {list(WORKLOADS)}")
    trees = {"base": None, "this tree": None}
    taken: dict[tuple[str, str, str], list[Timing]] = {}
    with tempfile.TemporaryDirectory() as folder:
        trees["base"] = unpack(args.base, Path(folder))
        for _ in range(args.repeat):
            for workload in args.workloads:
                for contender in args.contenders:
                    for tree, path in trees.items():
                        timing = child(workload, contender, args.records, path)
                        taken.setdefault((workload, contender, tree), []).append(timing)
    print(
        f"{args.records:,} records; seconds total / running / cpu, best total of "
        f"{args.repeat} interleaved rounds; base {args.base}"
    )
    for workload in args.workloads:
        for contender in args.contenders:
            before, after = (
                min(taken[workload, contender, tree], key=lambda t: t.total) for tree in trees
            )
            print(
                f"{workload:<11} {contender:<17} base {_figures(before)}   this tree "
                f"{_figures(after)}   running {after.running / before.running:.2f} x, "
                f"cpu {after.cpu / before.cpu:.2f} x"
            )
    return 0


def _figures(timing: Timing) -> str:
    return f"{timing.total:5.2f} / {timing.running:5.2f} / {timing.cpu:5.2f}"


if __name__ == "__main__":
    sys.exit(main())
