"""Executors: the same job in two worker processes against one event loop, in the same run.

Each workload runs on ``ProcessExecutor(workers=2)`` at parallelism 2 and on the local
executor at parallelism 1; the ratio is local seconds / process seconds (above 1: the worker
processes are faster). Every run includes its workers' start (a fresh process per worker and
attempt) and ends in a sink that counts in each subtask and tells the driving process its
count at the end (a ``DriverSide``), checked against the input.

The contenders: the local executor at parallelism 1 (the baseline: each job is one chain
there), the local executor at parallelism 2 (the same plan as in the workers, on one loop:
what splitting the chain at the keyed edge costs by itself), and ``ProcessExecutor(workers=2)``
at parallelism 2. Workloads:

- ``cpu-map``: a CPU-bound map (200 rounds of integer hashing a record), forward edges only:
  each worker runs whole chains.
- ``word-count`` and ``keyed-sum``: bench/word_count.py's and bench/keyed_sum.py's jobs,
  keyed, so records cross between the workers on the data plane (issue 17's goal: 1.5x).
  Their input is made in the source's subtasks from ``range(records)`` (a line or an event
  per number), so that no contender pickles millions of input records to its workers.

Each contender prints three figures: ``total``, the whole run (for the workers: starting
their processes, deploying, the records, tearing down); ``running``, from the first record
the sink got to its last (``time.monotonic``, one clock for every process of the machine),
which leaves the fixed costs out; and ``cpu``, the CPU seconds of the driving process and
its worker processes together, which says whether the workers had a core each (``cpu`` near
twice ``running``) or shared one with the machine's other work. Two ratios are printed, of
``total`` and of ``running``; the goal is stated for the first.

Run with ``--help`` for flags.
"""

from __future__ import annotations

import argparse
import math
import resource
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lockgate.connectors import CollectionSource
from lockgate.engine import (
    LocalExecutor,
    ProcessExecutor,
    Sink,
    SinkContext,
    SinkWriter,
    StreamEnvironment,
    run,
)
from lockgate.engine.io.driver_side import DriverSide

GOAL = 1.5  # process executor at parallelism 2 against the local one at 1 (issue 17)


class TallySink(Sink[Any], DriverSide):
    """Counts records per subtask; each subtask adds its count to the original at its end."""

    driver_only = ("count", "first", "last")

    def __init__(self) -> None:
        self.count = 0
        self.first = math.inf
        self.last = -math.inf

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _TallyWriter(self)

    def add(self, count: int, first: float, last: float) -> None:
        self.count += count
        self.first, self.last = min(self.first, first), max(self.last, last)


class _TallyWriter(SinkWriter[Any]):
    def __init__(self, sink: TallySink) -> None:
        self._sink = sink
        self._count = 0
        self._first = math.inf
        self._last = -math.inf

    async def write(self, records: list[Any]) -> None:
        if not self._count:
            self._first = time.monotonic()
        self._count += len(records)
        self._last = time.monotonic()

    async def finish(self) -> None:
        if self._sink.is_driver_copy:
            self._sink.add(self._count, self._first, self._last)
        else:
            self._sink.tell_driver("add", self._count, self._first, self._last)


def cpu_bound(record: int) -> int:
    value = record
    for _ in range(200):
        value = (value * 1_103_515_245 + 12_345) & 0xFFFFFFFF
    return value


def cpu_map(env: StreamEnvironment, sink: TallySink, count: int) -> int:
    env.from_source(CollectionSource(range(count)), uid="numbers").map(
        cpu_bound, uid="hash"
    ).sink_to(sink, uid="tally")
    return count


VOCABULARY = [f"w{i}" for i in range(5_000)]


def line(number: int) -> str:
    """Line ``number``: 10 words of the vocabulary, picked by a fixed stride."""
    return " ".join(VOCABULARY[(number * 7_919 + k * 104_729) % 5_000] for k in range(10))


def event(number: int) -> tuple[int, int]:
    return number % 10_000, number % 100


def word_count(env: StreamEnvironment, sink: TallySink, count: int) -> int:
    lines = count // 10
    (
        env.from_source(CollectionSource(range(lines)), uid="numbers")
        .map(line, uid="lines")
        .flat_map(str.split, uid="words")
        .map(lambda word: (word, 1), uid="ones")
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="tally")
    )
    return lines * 10


def keyed_sum(env: StreamEnvironment, sink: TallySink, count: int) -> int:
    (
        env.from_source(CollectionSource(range(count)), uid="numbers")
        .map(event, uid="events")
        .map(lambda e: (e[0], e[1] * 2), uid="doubled")
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="sums")
        .sink_to(sink, uid="tally")
    )
    return count


WORKLOADS: dict[str, Callable[[StreamEnvironment, TallySink, int], int]] = {
    "cpu-map": cpu_map,
    "word-count": word_count,
    "keyed-sum": keyed_sum,
}


@dataclass(frozen=True)
class Contender:
    name: str
    parallelism: int
    executor: Callable[[], Any]


CONTENDERS = (
    Contender("local p=1", 1, LocalExecutor),
    Contender("local p=2", 2, LocalExecutor),
    Contender("processes(2) p=2", 2, lambda: ProcessExecutor(workers=2)),
)


@dataclass(frozen=True)
class Timing:
    """One run: its whole time, the time records reached the sink, and the CPU it took."""

    total: float
    running: float
    cpu: float


def timing_of(workload: str, contender: Contender, records: int, folder: Path) -> Timing:
    env = StreamEnvironment(parallelism=contender.parallelism)
    env.set_checkpoint_storage(folder.as_uri())
    sink = TallySink()
    expected = WORKLOADS[workload](env, sink, records)
    cpu, started = cpu_seconds(), time.perf_counter()
    run(_execute, env, contender.executor())
    elapsed, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    if sink.count != expected:
        raise AssertionError(f"{workload} on {contender.name}: {sink.count} != {expected}")
    return Timing(elapsed, sink.last - sink.first, cpu)


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children waited for (the worker processes)."""
    own, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def _execute(env: StreamEnvironment, executor: Any) -> None:
    await env.execute("bench", executor=executor)


def best(workload: str, records: int, repeat: int) -> list[Timing]:
    """Each contender's run with the smallest total time, of ``repeat`` interleaved rounds."""
    rounds: list[list[Timing]] = [[] for _ in CONTENDERS]
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(repeat):
            for timings, contender in zip(rounds, CONTENDERS, strict=True):
                timings.append(timing_of(workload, contender, records, Path(folder)))
    return [min(timings, key=lambda timing: timing.total) for timings in rounds]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)  # executor_revisions.py
    args = parser.parse_args()
    if args.child:
        print_child_timing(*args.child, args.records)
        return
    print(f"{args.records:,} records; seconds total / running / cpu, best total of {args.repeat}")
    names = "".join(f" {contender.name:>22}" for contender in CONTENDERS)
    print(f"{'workload':<12}{names}  processes / local p=1: total, running (goal)")
    for workload in args.workloads:
        timings = best(workload, args.records, args.repeat)
        local, processes = timings[0], timings[-1]
        print(
            f"{workload:<12}{''.join(f' {_figures(t):>22}' for t in timings)}  "
            f"{local.total / processes.total:.2f}x, {local.running / processes.running:.2f}x "
            f"({GOAL}x)"
        )


def print_child_timing(workload: str, contender: str, records: int) -> None:
    """Run ``workload`` once on the contender named ``contender``; print its timing as JSON."""
    import json

    import lockgate.engine

    chosen = next(c for c in CONTENDERS if c.name == contender)
    with tempfile.TemporaryDirectory() as folder:
        timing = timing_of(workload, chosen, records, Path(folder))
    print(json.dumps(asdict(timing), separators=(",", ":")), lockgate.engine.__file__)


def _figures(timing: Timing) -> str:
    return f"{timing.total:.2f} / {timing.running:.2f} / {timing.cpu:.2f}"


if __name__ == "__main__":
    main()
