"""What the benchmarks share: the sinks, best-of-N timing, checks and the result table.

A benchmark is a ``Workload``: a floor (the job's own user functions called in a plain Python
loop over a dict, no engine) and a ``build`` that wires the same functions into a lockgate job
ending in a sink: a ``CountingSink`` (the engine's cost alone) or the ``CollectSink`` that
users' jobs and every example use (exactly-once, its records in checkpoints), picked by a
``SinkChoice``. ``main`` times the floor and the job at each parallelism with each sink in the
same process, checks every run against the floor, and prints one table with every ratio. The
pieces ``main`` is made of (``run_floor``, ``run_job``, ``check_latest``, ``best_seconds``)
serve benchmarks that compare other contenders, such as the same job with and without
checkpoints.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gc
import math
import os
import sys
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from lockgate.connectors import CollectSink
from lockgate.engine import JobResult, Sink, SinkContext, SinkWriter, StreamEnvironment, run

__all__ = [
    "COLLECT",
    "COUNTING",
    "SINKS",
    "Configure",
    "CountingSink",
    "JobRun",
    "ResultMismatch",
    "SinkChoice",
    "Unit",
    "Workload",
    "arguments",
    "best_seconds",
    "check_latest",
    "chosen_sinks",
    "freeze_input",
    "main",
    "parser",
    "run_floor",
    "run_job",
]

GOAL = 0.5  # lockgate at parallelism 1 reaches half the floor, unless a workload sets its own
CLOCK = time.process_time if os.environ.get("LOCKGATE_BENCH_CLOCK") == "cpu" else time.perf_counter
"""What runs are timed with: wall time, or with ``LOCKGATE_BENCH_CLOCK=cpu`` the process's CPU
time (all its threads), which other processes on a loaded machine do not inflate."""
LABEL_WIDTH = 42

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
class SinkChoice:
    """Which sink a lockgate run ends in, and how to read what reached it.

    ``create(latest_by)`` returns a new sink; ``count`` reads how many records it received and
    ``latest(sink, key_of)`` the last record per key (what a keyed running reduce ends with).
    """

    name: str
    label: str
    create: Callable[[Callable[[Any], Any] | None], Sink[Any]]
    count: Callable[[Any], int]
    latest: Callable[[Any, Callable[[Any], Any]], dict[Any, Any]]


def _last_per_key(records: Sequence[Any], key_of: Callable[[Any], Any]) -> dict[Any, Any]:
    return {key_of(record): record for record in records}


COUNTING = SinkChoice(
    "counting",
    "counting sink",
    lambda latest_by: CountingSink(latest_by=latest_by),
    lambda sink: sink.count,
    lambda sink, key_of: sink.latest,
)
"""A sink that only counts: what the engine costs by itself."""

COLLECT = SinkChoice(
    "collect",
    "CollectSink",
    lambda latest_by: CollectSink(),
    lambda sink: len(sink.results),
    lambda sink, key_of: _last_per_key(sink.results, key_of),
)
"""``lockgate.connectors.CollectSink``: exactly-once, its transactions' records in checkpoints."""

SINKS = {choice.name: choice for choice in (COUNTING, COLLECT)}


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
    the floor's state. ``goals`` maps a sink's name to the ratio to the floor the job must
    reach with it at parallelism 1 (``GOAL`` for a sink it does not name).
    """

    title: str
    units: Sequence[Unit]
    floor: Callable[[], tuple[int, dict[Any, Any]]]
    build: Callable[[StreamEnvironment, Sink[Any]], None]
    key_of: Callable[[Any], Any]
    expected_records: int
    goals: Mapping[str, float] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Measurement:
    """The best time of one contender; ``parallelism`` and ``sink`` are ``None`` for the floor."""

    parallelism: int | None
    seconds: float
    sink: SinkChoice | None = None

    @property
    def label(self) -> str:
        if self.parallelism is None or self.sink is None:
            return "floor (plain Python loop)"
        return f"lockgate parallelism={self.parallelism}, {self.sink.label}"


@dataclass(frozen=True)
class JobRun:
    """What one lockgate run left: its sink, how many records reached it, the job's result."""

    sink: Any
    count: int
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
    sink_flag: bool = False,
) -> argparse.ArgumentParser:
    """Return a parser of the flags every benchmark takes, plus its own input size flag.

    ``parallelisms`` is the default of ``--parallelism``; ``None`` leaves that flag out.
    With ``sink_flag``, ``--sinks`` picks the sinks (``SINKS``' names; default all).
    """
    flags = argparse.ArgumentParser(description=description)
    flags.add_argument(size_flag, type=int, default=size_default, help=size_help)
    flags.add_argument("--repeat", type=int, default=3, help="runs per contender; best is kept")
    if sink_flag:
        flags.add_argument(
            "--sinks",
            nargs="+",
            choices=list(SINKS),
            default=list(SINKS),
            help="the sinks the jobs end in: a counting sink, CollectSink",
        )
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
    """Parse the flags every throughput benchmark takes, plus its own input size flag."""
    flags = parser(
        description,
        size_flag=size_flag,
        size_default=size_default,
        size_help=size_help,
        sink_flag=True,
    )
    return flags.parse_args()


def chosen_sinks(names: Sequence[str]) -> list[SinkChoice]:
    """Return the sinks ``--sinks`` named, in ``SINKS``' order."""
    return [choice for name, choice in SINKS.items() if name in names]


def main(
    workload: Workload,
    *,
    repeat: int,
    parallelisms: Sequence[int],
    sinks: Sequence[SinkChoice] = (COUNTING, COLLECT),
) -> int:
    """Check, measure and report ``workload`` with each sink; return the process exit status."""
    try:
        state = run_floor(workload)
        for parallelism in parallelisms:
            for sink in sinks:
                check_latest(workload, parallelism, state, sink=sink)
        contenders: dict[tuple[int, SinkChoice] | None, Callable[[], object]] = {
            None: lambda: run_floor(workload)
        }
        for parallelism in parallelisms:
            for sink in sinks:
                contenders[parallelism, sink] = functools.partial(
                    run_job, workload, parallelism, sink=sink
                )
        measurements = best_of(repeat, contenders)
    except ResultMismatch as mismatch:
        print(f"{workload.title}: wrong result: {mismatch}", file=sys.stderr)
        return 1
    _print_table(workload, repeat, measurements)
    return 0


def best_of(
    repeat: int, contenders: Mapping[tuple[int, SinkChoice] | None, Callable[[], object]]
) -> list[Measurement]:
    """Time every contender once per round, for ``repeat`` rounds; keep each one's best.

    Rounds interleave the contenders, so a burst of load from elsewhere on the machine slows
    one round of all of them rather than every run of one.
    """
    best = best_seconds(repeat, contenders)
    return [
        Measurement(None, seconds) if name is None else Measurement(name[0], seconds, name[1])
        for name, seconds in best.items()
    ]


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
    started = CLOCK()
    outcome = action()
    seconds = CLOCK() - started
    del outcome  # freeing what the run kept (a CollectSink's results) is not part of it
    return seconds


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
    sink: SinkChoice = COUNTING,
) -> JobRun:
    """Run the job once, untimed, and check that its last record per key equals ``state``.

    Raises:
        ResultMismatch: when the job's record count or final records differ from the floor's.
    """
    # An untimed run (it warms up too): keeping the last record per key costs the sink work
    # the floor never does.
    job = run_job(workload, parallelism, configure=configure, latest_by=workload.key_of, sink=sink)
    latest = sink.latest(job.sink, workload.key_of)
    if latest != state:
        differing = sum(1 for key, value in state.items() if latest.get(key) != value)
        raise ResultMismatch(
            f"lockgate at parallelism={parallelism} with a {sink.label} ended with "
            f"{len(latest):,} keys, the floor with {len(state):,}; {differing:,} of the "
            "floor's keys differ"
        )
    return job


def run_job(
    workload: Workload,
    parallelism: int,
    *,
    configure: Configure | None = None,
    latest_by: Callable[[Any], Any] | None = None,
    sink: SinkChoice = COUNTING,
) -> JobRun:
    """Build the job on a fresh environment (``configure`` changes it first) and run it.

    Raises:
        ResultMismatch: when the sink did not receive ``workload.expected_records`` records.
    """
    env = StreamEnvironment(parallelism=parallelism)
    if configure is not None:
        configure(env)
    created = sink.create(latest_by)
    workload.build(env, created)
    result = run(env.execute, workload.title)
    count = sink.count(created)
    who = f"lockgate parallelism={parallelism} with a {sink.label}"
    _check_count(who, count, workload.expected_records)
    return JobRun(created, count, result)


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
    for run_at_1 in (m for m in runs if m.parallelism == 1 and m.sink is not None):
        assert run_at_1.sink is not None
        goal = workload.goals.get(run_at_1.sink.name, GOAL)
        verdict = "met" if floor.seconds / run_at_1.seconds >= goal else "NOT met"
        print(f"goal: parallelism=1, {run_at_1.sink.label}, at least {goal:.2f} x floor: {verdict}")


def _row(units: Sequence[Unit], floor: Measurement, measurement: Measurement) -> str:
    rates = "".join(f"{unit.count / measurement.seconds:>16,.0f}" for unit in units)
    line = f"{measurement.label:<{LABEL_WIDTH}}{rates}"
    if len(units) == 1:
        line += f" {units[0].name}"
    if measurement.parallelism is not None:
        line += f"   {floor.seconds / measurement.seconds:.2f} x floor"
    return line
