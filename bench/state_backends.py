"""State backends: the keyed running sum of ``keyed_sum.py`` on RocksDB against memory.

The very workload of ``keyed_sum.py`` (input, user functions, job, and the same checks
against the floor) runs on each state backend, in interleaved rounds, each keeping its best.
Printed: events per second on each, and RocksDB's rate as a ratio of memory's. Run with
``--help`` for flags.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import keyed_sum
from harness import (
    ResultMismatch,
    Workload,
    best_seconds,
    check_latest,
    freeze_input,
    parser,
    run_floor,
    run_job,
)

from lockgate.engine import StreamEnvironment

BACKENDS = ("memory", "rocksdb")
LABEL_WIDTH = 28


def backend(name: str, base: Path) -> Callable[[StreamEnvironment], None]:
    """Return a configure step that puts the job's keyed state on ``name``."""

    def configure(env: StreamEnvironment) -> None:
        env.set_state_backend(name, path=base if name == "rocksdb" else None)

    return configure


def measure(events: int, repeat: int, parallelisms: Sequence[int], base: Path) -> None:
    """Check every contender against the floor, then time them and print the table."""
    workload = keyed_sum.workload(events)
    freeze_input()
    state = run_floor(workload)
    contenders = {}
    for parallelism in parallelisms:
        for name in BACKENDS:
            configure = backend(name, base)
            check_latest(workload, parallelism, state, configure=configure)
            contenders[name, parallelism] = _timed(workload, parallelism, configure)
    best = best_seconds(repeat, contenders)
    print(f"{workload.title}, state backends, best of {repeat}")
    for parallelism in parallelisms:
        memory, rocksdb = (best[name, parallelism] for name in BACKENDS)
        for name in BACKENDS:
            label = f"{name} parallelism={parallelism}"
            print(f"{label:<{LABEL_WIDTH}}{events / best[name, parallelism]:>14,.0f} ev/s")
        print(f"{'rocksdb / memory':<{LABEL_WIDTH}}{memory / rocksdb:>14.2f} x")


def _timed(
    workload: Workload, parallelism: int, configure: Callable[[StreamEnvironment], None]
) -> Callable[[], object]:
    return lambda: run_job(workload, parallelism, configure=configure)


def main() -> int:
    flags = parser(
        __doc__.splitlines()[0],
        size_flag="--events",
        size_default=1_000_000,
        size_help="input events",
        parallelisms=(1,),
    )
    args = flags.parse_args()
    with tempfile.TemporaryDirectory(prefix="lockgate-bench-rocksdb-") as folder:
        try:
            measure(args.events, args.repeat, args.parallelism, Path(folder))
        except ResultMismatch as mismatch:
            print(f"state backends: wrong result: {mismatch}", file=sys.stderr)
            return 1
        leftovers = sorted(path.name for path in Path(folder).iterdir())
    if leftovers:
        print(f"state backends: databases left behind: {leftovers}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
