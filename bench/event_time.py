"""Event time: what generating and forwarding watermarks costs a job.

The keyed running sum of ``keyed_sum.py`` over events ``(i % 10_000, i % 100, i)``, once
in processing time and once with a watermark strategy at the source (event time = the third
field, 100 of out-of-orderness allowed), with watermarks every 0.2 s (Flink's default
interval) and after every batch (``auto_watermark_interval=0``), each ending in a counting
sink and in ``CollectSink``. Each run's result is checked against the plain loop's; the
ratios are against the job without watermarks into the same sink, measured in the same run.
Run with ``--help`` for flags.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import sys
from collections.abc import Callable, Sequence
from typing import Any

import keyed_sum
from harness import (
    COUNTING,
    ResultMismatch,
    SinkChoice,
    Workload,
    best_seconds,
    check_latest,
    chosen_sinks,
    freeze_input,
    parser,
    run_floor,
    run_job,
)

from lockgate.connectors import CollectionSource
from lockgate.engine import Sink, StreamEnvironment, WatermarkStrategy

GOAL = 0.90  # throughput with watermarks every 0.2 s, at least 0.90 x without

Configure = Callable[[StreamEnvironment], None]


def timed_events(count: int) -> list[tuple[int, int, int]]:
    """The keyed running sum's events, each with its index as a third field."""
    return [(i % keyed_sum.KEYS, i % 100, i) for i in range(count)]


def build(
    events: list[tuple[int, int, int]], strategy: WatermarkStrategy | None
) -> Callable[[StreamEnvironment, Sink[Any]], None]:
    """The keyed running sum over ``events``, in event time if a strategy is given."""

    def add_job(env: StreamEnvironment, sink: Sink[Any]) -> None:
        (
            env.from_source(CollectionSource(events), uid="events", watermark_strategy=strategy)
            .map(keyed_sum.doubled, uid="doubled")
            .key_by(keyed_sum.key_of)
            .reduce(keyed_sum.add, uid="sums")
            .sink_to(sink, uid="count")
        )

    return add_job


def interval(seconds: float) -> Configure:
    """Set the environment's auto watermark interval."""

    def configure(env: StreamEnvironment) -> None:
        env.auto_watermark_interval = seconds

    return configure


def measure(
    count: int, repeat: int, parallelism: int, sinks: Sequence[SinkChoice]
) -> dict[tuple[str, SinkChoice], float]:
    """Seconds per contender and sink: without watermarks, and with them at two intervals."""
    events = timed_events(count)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(100.0).with_timestamp_assigner(
        operator.itemgetter(2)
    )
    plain = dataclasses.replace(
        keyed_sum.workload(0),
        title=f"keyed running sum, {count:,} events",
        floor=lambda: keyed_sum.floor(events),  # type: ignore[arg-type]
        build=build(events, None),
        expected_records=count,
    )
    timed = dataclasses.replace(plain, build=build(events, strategy))
    freeze_input()  # the events, built just now
    state = run_floor(plain)
    contenders: dict[str, tuple[Workload, Configure | None]] = {
        "processing time (no watermarks)": (plain, None),
        "event time, watermarks every 0.2 s": (timed, interval(0.2)),
        "event time, a watermark per batch": (timed, interval(0.0)),
    }
    for sink in sinks:
        for workload, configure in contenders.values():
            check_latest(workload, parallelism, state, configure=configure, sink=sink)
    return best_seconds(
        repeat,
        {
            (name, sink): functools.partial(
                run_job, workload, parallelism, configure=configure, sink=sink
            )
            for sink in sinks
            for name, (workload, configure) in contenders.items()
        },
    )


def main() -> int:
    flags = parser(
        __doc__.splitlines()[0],
        size_flag="--events",
        size_default=2_000_000,
        size_help="input events",
        parallelisms=(1,),
        sink_flag=True,
    )
    args = flags.parse_args()
    sinks = chosen_sinks(args.sinks)
    for parallelism in args.parallelism:
        try:
            seconds = measure(args.events, args.repeat, parallelism, sinks)
        except ResultMismatch as mismatch:
            print(f"event time: wrong result: {mismatch}", file=sys.stderr)
            return 1
        for sink in sinks:
            report(args.events, args.repeat, parallelism, sink, seconds)
    return 0


def report(
    count: int,
    repeat: int,
    parallelism: int,
    sink: SinkChoice,
    seconds: dict[tuple[str, SinkChoice], float],
) -> None:
    """Print each contender's rate into ``sink`` and its ratio to the job without watermarks."""
    print(
        f"keyed running sum, {count:,} events, parallelism {parallelism}, {sink.label}, "
        f"best of {repeat}"
    )
    mine = {name: taken for (name, into), taken in seconds.items() if into is sink}
    baseline = next(iter(mine.values()))
    for name, taken in mine.items():
        print(f"{name:<38} {count / taken:>12,.0f} ev/s   {baseline / taken:.2f} x")
    if sink is COUNTING:  # the goal is the engine's cost, judged without a sink's own
        ratio = baseline / mine["event time, watermarks every 0.2 s"]
        verdict = "met" if ratio >= GOAL else "NOT met"
        print(f"goal: watermarks every 0.2 s at least {GOAL:.2f} x without: {verdict}")


if __name__ == "__main__":
    sys.exit(main())
