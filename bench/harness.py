"""What the benchmarks share: a counting sink, best-of-N timing, checks and the result table.

A benchmark is a ``Workload``: a floor (the job's own user functions called in a plain Python
loop over a dict, no engine) and a ``build`` that wires the same functions into a lockgate job
ending in a ``CountingSink``. ``main`` times the floor and the job at each parallelism in the
same process, checks every run against the floor, and prints one table. The pieces ``main``
is made of (``run_floor``, ``run_job``, ``check_latest``, ``best_seconds``) serve benchmarks
that compare other contenders, such as the same job with and without checkpoints.
"""

from __future__ import annotations

import argparse
import functools
import gc
import math
import sys
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from lockgate.engine import JobResult, Sink, SinkContext, SinkWriter, StreamEnvironment, run

__all__ = [
    "Configure",
    "CountingSink",
    "JobRun",
    "ResultMismatch",
    "Unit",
    "Workload",
    "arguments",
    "best_seconds",
    "check_latest",
    "freeze_input",
    "main",
    "parser",
    "run_floor",
    "run_job",
]

GOAL = 0.5  # the target: lockgate at parallelism 1 reaches half the floor
LABEL_WIDTH = 28

K = TypeVar("K", bound=Hashable)

Configure = Callable[[StreamEnvironment], None]
"""Changes an environment before the job is built on it (e.g. enables checkpointing)."""


class CountingSink(Sink[Any]):
    """Counts the records that all its subtasks write.

    Given ``latest_by`` (a key function), it also keeps in ``latest`` the last record written
    for each key: the final result of a keyed running reduce.
    """

    def __init__(self, *, latest_by: Callable[[Any], Any] | None = None) -> None:
        self.count = 0
        self.latest_by = latest_by
        self.latest: dict[Any, Any] = {}

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _CountingWriter(self)


class _CountingWriter(SinkWriter[Any]):
    def __init__(self, sink: CountingSink) -> None:
        self._sink = sink

    async def write(self, records: list[Any]) -> None:
        sink = self._sink
        sink.count += len(records)
        if sink.latest_by is not None:
            key_of = sink.latest_by
            sink.latest.update((key_of(record), record) for record in records)


@dataclass(frozen=True)
class Unit:
    """A rate to report: ``count`` things (events, lines, words) per second, e.g. ``ev/s``."""

    name: str
    count: int


@dataclass(frozen=True)
class Workload:
    """One benchmark: its floor, its lockgate job, and what both must produce.

    ``floor()`` returns how many records its loop emitted and its final state: the last
    record per key. ``build(env, sink)`` adds the job to ``env``; the job must write
    ``expected_records`` records to ``sink``, and its last record per ``key_of`` must equal
    the floor's state.
    """

    title: str
    units: Sequence[Unit]
    floor: Callable[[], tuple[int, dict[Any, Any]]]
    build: Callable[[StreamEnvironment, CountingSink], None]
    key_of: Callable[[Any], Any]
    expected_records: int


@dataclass(frozen=True)
class Measurement:
    """The best time of one contender; ``parallelism`` is ``None`` for the floor."""

    parallelism: int | None
    seconds: float

    @property
    def label(self) -> str:
        if self.parallelism is None:
            return "floor (plain Python loop)"
        return f"lockgate parallelism={self.parallelism}"


@dataclass(frozen=True)
class JobRun:
    """What one lockgate run left: its sink (counts, last records) and the job's result."""

    sink: CountingSink
    result: JobResult


class ResultMismatch(Exception):
    """A run produced something other than the floor did."""


def parser(
    description: str,
    *,
    size_flag: str,
    size_default: int,
    size_help: str,
    parallelisms: Sequence[int] | None = (1, 2),
) -> argparse.ArgumentParser:
    """Return a parser of the flags every benchmark takes, plus its own input size flag.

    ``parallelisms`` is the default of ``--parallelism``; ``None`` leaves that flag out.
    """
    flags = argparse.ArgumentParser(description=description)
    flags.add_argument(size_flag, type=int, default=size_default, help=size_help)
    flags.add_argument("--repeat", type=int, default=3, help="runs per contender; best is kept")
    if parallelisms is not None:
        flags.add_argument(
            "--parallelism",
            type=int,
            nargs="+",
            default=list(parallelisms),
            help="lockgate parallelisms",
        )
    return flags


def arguments(
    description: str, *, size_flag: str, size_default: int, size_help: str
) -> argparse.Namespace:
    """Parse the flags every benchmark takes, plus its own input size flag."""
    flags = parser(description, size_flag=size_flag, size_default=size_default, size_help=size_help)
    return flags.parse_args()


def main(workload: Workload, *, repeat: int, parallelisms: Sequence[int]) -> int:
    """Check, measure and report ``workload``; return the process exit status."""
    try:
        state = run_floor(workload)
        for parallelism in parallelisms:
            check_latest(workload, parallelism, state)
        contenders = {None: lambda: run_floor(workload)} | {
            p: functools.partial(run_job, workload, p) for p in parallelisms
        }
        measurements = best_of(repeat, contenders)
    except ResultMismatch as mismatch:
        print(f"{workload.title}: wrong result: {mismatch}", file=sys.stderr)
        return 1
    _print_table(workload, repeat, measurements)
    return 0


def best_of(repeat: int, contenders: dict[int | None, Callable[[], object]]) -> list[Measurement]:
    """Time every contender once per round, for ``repeat`` rounds; keep each one's best.

    Rounds interleave the contenders, so a burst of load from elsewhere on the machine slows
    one round of all of them rather than every run of one.
    """
    best = best_seconds(repeat, contenders)
    return [Measurement(parallelism, seconds) for parallelism, seconds in best.items()]


def best_seconds(repeat: int, contenders: Mapping[K, Callable[[], object]]) -> dict[K, float]:
    """Time every contender once per round, for ``repeat`` rounds; return each one's best.

    Contenders are named by any key; they run in the mapping's order within each round.
    """
    best = dict.fromkeys(contenders, math.inf)
    for _ in range(repeat):
        for name, action in contenders.items():
            best[name] = min(best[name], _seconds(action))
    return best


def freeze_input() -> None:
    """Exclude everything alive now (the prebuilt input) from garbage collection passes.

    Both contenders then pay the collector only for the objects they create themselves.
    """
    gc.collect()
    gc.freeze()


def _seconds(action: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def run_floor(workload: Workload) -> dict[Any, Any]:
    """Run the floor loop once, check its record count, and return its final state."""
    records, state = workload.floor()
    _check_count("floor", records, workload.expected_records)
    return state


def check_latest(
    workload: Workload,
    parallelism: int,
    state: dict[Any, Any],
    *,
    configure: Configure | None = None,
) -> JobRun:
    """Run the job once, untimed, and check that its last record per key equals ``state``.

    Raises:
        ResultMismatch: when the job's record count or final records differ from the floor's.
    """
    # An untimed run (it warms up too): keeping the last record per key costs the sink work
    # the floor never does.
    job = run_job(workload, parallelism, configure=configure, latest_by=workload.key_of)
    latest = job.sink.latest
    if latest != state:
        differing = sum(1 for key, value in state.items() if latest.get(key) != value)
        raise ResultMismatch(
            f"lockgate at parallelism={parallelism} ended with {len(latest):,} keys, "
            f"the floor with {len(state):,}; {differing:,} of the floor's keys differ"
        )
    return job


def run_job(
    workload: Workload,
    parallelism: int,
    *,
    configure: Configure | None = None,
    latest_by: Callable[[Any], Any] | None = None,
) -> JobRun:
    """Build the job on a fresh environment (``configure`` changes it first) and run it.

    Raises:
        ResultMismatch: when the sink did not receive ``workload.expected_records`` records.
    """
    env = StreamEnvironment(parallelism=parallelism)
    if configure is not None:
        configure(env)
    sink = CountingSink(latest_by=latest_by)
    workload.build(env, sink)
    result = run(env.execute, workload.title)
    _check_count(f"lockgate parallelism={parallelism}", sink.count, workload.expected_records)
    return JobRun(sink, result)


def _check_count(who: str, records: int, expected: int) -> None:
    if records != expected:
        raise ResultMismatch(f"{who} emitted {records:,} records; expected {expected:,}")


def _print_table(workload: Workload, repeat: int, measurements: list[Measurement]) -> None:
    floor, *runs = measurements
    print(f"{workload.title}, best of {repeat}")
    if len(workload.units) > 1:
        print(" " * LABEL_WIDTH + "".join(f"{u.name:>16}" for u in workload.units))
    for measurement in measurements:
        print(_row(workload.units, floor, measurement))
    one = next((m for m in runs if m.parallelism == 1), None)
    if one is not None:
        verdict = "met" if floor.seconds / one.seconds >= GOAL else "NOT met"
        print(f"goal: parallelism=1 at least {GOAL:.2f} x floor: {verdict}")


def _row(units: Sequence[Unit], floor: Measurement, measurement: Measurement) -> str:
    rates = "".join(f"{unit.count / measurement.seconds:>16,.0f}" for unit in units)
    line = f"{measurement.label:<{LABEL_WIDTH}}{rates}"
    if len(units) == 1:
        line += f" {units[0].name}"
    if measurement.parallelism is not None:
        line += f"   {floor.seconds / measurement.seconds:.2f} x floor"
    return line
