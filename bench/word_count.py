"""Word count: lockgate against the same functions in a plain Python loop.

Each line holds 10 words drawn with ``random.Random(42)`` from a 5,000-word vocabulary. The
job splits lines into words, pairs each with 1, keys by word, keeps a running count per word
and ends in a counting sink, and again in ``CollectSink`` (which keeps every result, exactly
once). Run with ``--help`` for flags.
"""

from __future__ import annotations

import random
import sys
from typing import Any

from harness import Unit, Workload, arguments, chosen_sinks, freeze_input, main

from lockgate.connectors import CollectionSource
from lockgate.engine import Sink, StreamEnvironment

VOCABULARY = [f"w{i}" for i in range(5_000)]
WORDS_PER_LINE = 10
GOALS = {"counting": 0.65, "collect": 0.40}  # x floor at parallelism 1, per sink (issue 19)

Pair = tuple[str, int]


def words(line: str) -> list[str]:
    return line.split()


def one(word: str) -> Pair:
    return word, 1


def key_of(pair: Pair) -> str:
    return pair[0]


def add(total: Pair, pair: Pair) -> Pair:
    return total[0], total[1] + pair[1]


def floor(lines: list[str]) -> tuple[int, dict[Any, Any]]:
    state: dict[Any, Any] = {}
    count = 0
    for line in lines:
        for word in words(line):
            value = one(word)
            key = key_of(value)
            previous = state.get(key)
            state[key] = value if previous is None else add(previous, value)
            count += 1
    return count, state


def build(env: StreamEnvironment, sink: Sink[Any], lines: list[str]) -> None:
    (
        env.from_source(CollectionSource(lines), uid="lines")
        .flat_map(words, uid="words")
        .map(one, uid="ones")
        .key_by(key_of)
        .reduce(add, uid="counts")
        .sink_to(sink, uid="count")
    )


def generate(count: int) -> list[str]:
    rng = random.Random(42)
    return [" ".join(rng.choices(VOCABULARY, k=WORDS_PER_LINE)) for _ in range(count)]


def workload(count: int) -> Workload:
    lines = generate(count)
    return Workload(
        title=f"word count, {count:,} lines of {WORDS_PER_LINE} words",
        units=[Unit("lines/s", count), Unit("words/s", count * WORDS_PER_LINE)],
        floor=lambda: floor(lines),
        build=lambda env, sink: build(env, sink, lines),
        key_of=key_of,
        expected_records=count * WORDS_PER_LINE,
        goals=GOALS,
    )


if __name__ == "__main__":
    args = arguments(
        __doc__.splitlines()[0],
        size_flag="--lines",
        size_default=200_000,
        size_help="input lines",
    )
    chosen = workload(args.lines)
    freeze_input()
    sinks = chosen_sinks(args.sinks)
    sys.exit(main(chosen, repeat=args.repeat, parallelisms=args.parallelism, sinks=sinks))
