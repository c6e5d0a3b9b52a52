"""Keyed running sum: lockgate against the same functions in a plain Python loop.

Event ``i`` is ``(i % 10_000, i % 100)``. The job doubles each value, keys by the first field,
keeps a running sum per key and ends in a counting sink, and again in ``CollectSink`` (which
keeps every result, exactly once). Run with ``--help`` for flags.
"""

from __future__ import annotations

import sys
from typing import Any

from harness import Unit, Workload, arguments, chosen_sinks, freeze_input, main

from lockgate.connectors import CollectionSource
from lockgate.engine import Sink, StreamEnvironment

KEYS = 10_000
GOALS = {"counting": 0.80, "collect": 0.50}  # x floor at parallelism 1, per sink (issue 19)

Event = tuple[int, int]


def doubled(event: Event) -> Event:
    return event[0], event[1] * 2


def key_of(event: Event) -> int:
    return event[0]


def add(total: Event, event: Event) -> Event:
    return total[0], total[1] + event[1]


def floor(events: list[Event]) -> tuple[int, dict[Any, Any]]:
    state: dict[Any, Any] = {}
    count = 0
    for event in events:
        value = doubled(event)
        key = key_of(value)
        previous = state.get(key)
        state[key] = value if previous is None else add(previous, value)
        count += 1
    return count, state


def build(env: StreamEnvironment, sink: Sink[Any], events: list[Event]) -> None:
    (
        env.from_source(CollectionSource(events), uid="events")
        .map(doubled, uid="doubled")
        .key_by(key_of)
        .reduce(add, uid="sums")
        .sink_to(sink, uid="count")
    )


def workload(count: int) -> Workload:
    events = [(i % KEYS, i % 100) for i in range(count)]
    return Workload(
        title=f"keyed running sum, {count:,} events",
        units=[Unit("ev/s", count)],
        floor=lambda: floor(events),
        build=lambda env, sink: build(env, sink, events),
        key_of=key_of,
        expected_records=count,
        goals=GOALS,
    )


if __name__ == "__main__":
    args = arguments(
        __doc__.splitlines()[0],
        size_flag="--events",
        size_default=2_000_000,
        size_help="input events",
    )
    chosen = workload(args.events)
    freeze_input()
    sinks = chosen_sinks(args.sinks)
    sys.exit(main(chosen, repeat=args.repeat, parallelisms=args.parallelism, sinks=sinks))
