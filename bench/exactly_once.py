"""The exactly-once search's speed: seeds per wall second, with kills and without.

The job of ``tests/engine/simulation/test_exactly_once.py``: 200 arrivals at 100 a second,
numbered per key in keyed state on two subtasks, into a two-phase-commit sink,
checkpointing every 0.2 s. ``--seeds`` seeds run with ``--kills`` attempts killed at random
virtual times each (the test's search), then the same seeds with no kill (the baseline,
measured in the same run). The goal (issue 16): the test's 200 seeds in ``make test`` in
under 2 minutes of wall time. Prints both wall times, their ratio, and the search's
summary.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from lockgate.engine import (
    KeyedProcessFunction,
    RestartStrategy,
    RuntimeContext,
    StreamEnvironment,
    ValueStateDescriptor,
)
from lockgate.engine.simulation import (
    Arrival,
    ArrivalSource,
    ConstantRate,
    CrashScenario,
    ExactlyOnceSearch,
    SearchResult,
)
from lockgate.engine.testing import RecordingTwoPhaseCommitSink

GOAL = 120.0  # wall seconds for the test's 200 seeds
RECORDS = 200


class CountPerKey(KeyedProcessFunction[int, tuple[int, int], tuple[int, int, int]]):
    def open(self, context: RuntimeContext) -> None:
        self.count = context.get_state(ValueStateDescriptor("count", default=0))

    def process_element(self, value: tuple[int, int], context: Any) -> Any:
        count = self.count.value() + 1
        self.count.update(count)
        yield (value[0], count, value[1])


def numbered(arrival: Arrival) -> tuple[int, int]:
    return arrival.seq % 10, arrival.seq


def scenario(seed: int) -> CrashScenario:
    sink: RecordingTwoPhaseCommitSink[tuple[int, int, int]] = RecordingTwoPhaseCommitSink()
    env = StreamEnvironment(parallelism=2, batch_size=16, channel_capacity=64)
    env.enable_checkpointing(0.2)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=5, delay=0.05))
    (
        env.from_source(
            ArrivalSource(ConstantRate(100.0), limit=RECORDS), uid="events", parallelism=1
        )
        .map(numbered, uid="number", parallelism=1)
        .key_by(lambda pair: pair[0])
        .process(CountPerKey(), uid="count")
        .sink_to(sink, uid="out")
    )
    expected = [(seq % 10, seq // 10 + 1, seq) for seq in range(RECORDS)]
    return CrashScenario(env, lambda: sink.committed, expected)


def timed(search: ExactlyOnceSearch, seeds: int) -> tuple[float, SearchResult]:
    started = time.perf_counter()
    result = search.run(range(seeds))
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--kills", type=int, default=2)
    options = parser.parse_args()

    window = (0.25, 1.95)
    killed, result = timed(
        ExactlyOnceSearch(scenario, until=60.0, window=window, kills=options.kills),
        options.seeds,
    )
    baseline, _ = timed(
        ExactlyOnceSearch(scenario, until=60.0, window=window, kills=0), options.seeds
    )
    scaled = killed * 200 / options.seeds
    verdict = "met" if scaled <= GOAL else "NOT met"
    print(f"{options.seeds} seeds with {options.kills} kills each: {killed:.1f} s wall")
    print(f"{options.seeds} seeds without a kill (baseline): {baseline:.1f} s wall")
    print(f"with kills / without: {killed / baseline:.2f}")
    print(f"200 seeds in {scaled:.1f} s of wall time: goal <= {GOAL:.0f} s {verdict}")
    print(result.describe())


if __name__ == "__main__":
    main()
