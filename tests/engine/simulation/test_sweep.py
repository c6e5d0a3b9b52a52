"""Sweep: a scenario over a grid of parameters, and the capacity answers it finds."""

from __future__ import annotations

import json

import pytest

from lockgate.engine import StreamEnvironment
from lockgate.engine.simulation import (
    ArrivalSource,
    Constant,
    ConstantRate,
    LogNormal,
    Outage,
    Poisson,
    Service,
    ServiceSink,
    Sweep,
    p99_latency_below,
    recovers_within,
    sustainable,
)


def enrichment(*, capacity: int, rate: float = 1_000.0) -> StreamEnvironment:
    """Poisson arrivals into remote calls of 20 ms on average, results in any order."""
    env = StreamEnvironment()
    (
        env.from_source(ArrivalSource(Poisson(rate), tick=0.01), uid="events")
        .async_map(Service(LogNormal(0.02)), capacity=capacity, ordered=False, uid="call")
        .disable_chaining()
        .sink_to(ServiceSink(Constant(0.0)), uid="out")
        .disable_chaining()
    )
    return env


def test_the_smallest_capacity_for_a_p99_under_1_s_is_what_littles_law_says() -> None:
    # At 1,000 calls a second of 20 ms, L = lambda * W = 20 calls are in flight on average:
    # fewer slots cannot keep up (the queue grows until the channels are full, seconds of
    # latency), and a few more are enough.
    sweep = Sweep(enrichment, seed=1, until=30.0)

    answer = sweep.smallest("capacity", range(1, 65), p99_latency_below(1.0), rate=1_000.0)

    assert answer.value is not None and 20 <= answer.value <= 30
    assert answer.tried[answer.value] and not answer.tried[answer.value - 1]
    assert len(answer.tried) <= 8  # bisected, not the whole range
    assert "capacity = " in answer.describe()


def slow_sink(*, rate: float) -> StreamEnvironment:
    env = StreamEnvironment()
    (
        env.from_source(ArrivalSource(ConstantRate(rate)), uid="events")
        .sink_to(ServiceSink(Constant(0.01)), uid="out")
        .disable_chaining()
    )
    return env


def test_the_highest_sustainable_rate_into_a_sink_of_100_per_second_is_100() -> None:
    sweep = Sweep(slow_sink, seed=1, until=60.0)

    answer = sweep.largest("rate", (50.0, 200.0), sustainable(), tolerance=2.0)

    assert answer.value is not None and 98.0 <= answer.value <= 100.0
    assert not any(ok for value, ok in answer.tried.items() if value > 101.0)


def test_an_outage_recovers_within_a_time_only_if_the_backlog_drains_by_then() -> None:
    # 100 records a second into a sink of 200 a second, stalled for 10 s: 1,000 records
    # wait, and drain at 100 a second more than come, in some 10 s after the outage.
    def stalled() -> StreamEnvironment:
        env = StreamEnvironment()
        sink = ServiceSink(Constant(0.005), outages=[Outage(10.0, 10.0, kind="stall")])
        (
            env.from_source(ArrivalSource(ConstantRate(100.0)), uid="events")
            .sink_to(sink, uid="out")
            .disable_chaining()
        )
        return env

    report = Sweep(stalled, seed=1, until=60.0).simulate()

    assert recovers_within(25.0)(report)
    assert not recovers_within(15.0)(report)


def test_a_grid_runs_every_combination_and_tabulates_them() -> None:
    result = Sweep(slow_sink, seed=1, until=10.0).run(rate=[50.0, 1_000.0])

    assert [run.parameters for run in result.runs] == [{"rate": 50.0}, {"rate": 1_000.0}]
    lines = result.to_table().splitlines()
    assert lines[0].split()[:3] == ["rate", "sink", "records/s"]
    assert lines[2].split()[-1] == "out"  # the second run names the sink as its bottleneck
    assert json.loads(result.to_json())[1]["parameters"] == {"rate": 1_000.0}


def test_a_question_no_setting_answers_has_no_value() -> None:
    sweep = Sweep(slow_sink, seed=1, until=10.0)

    answer = sweep.largest("rate", (150.0, 200.0), sustainable(), tolerance=25.0)

    assert answer.value is None
    assert answer.describe().startswith("no rate tried gives sustainable")


def test_a_range_that_is_no_range_is_refused() -> None:
    with pytest.raises(ValueError, match="largest needs low < high and tolerance > 0"):
        Sweep(slow_sink, seed=1, until=1.0).largest(
            "rate", (10.0, 10.0), sustainable(), tolerance=1.0
        )
