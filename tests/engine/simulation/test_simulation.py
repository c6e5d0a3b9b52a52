"""Simulation: the real engine on virtual time, checked against queueing theory and the
classic backpressure scenario, and repeatable for a seed."""

from __future__ import annotations

import pytest

from lockgate.engine import OperatorError, StreamEnvironment
from lockgate.engine.runtime.subtask.heads import READ_AHEAD
from lockgate.engine.simulation import (
    ArrivalSource,
    Constant,
    ConstantRate,
    CpuCost,
    ServiceSink,
    Simulation,
)
from tests.engine.jobs.scenarios import classic, enrichment, mm1

HOUR = 3_600.0


def test_the_same_seed_gives_a_byte_identical_json_report() -> None:
    # Checkpoints every 5 s: their encoding runs in threads, which must not change a thing.
    first = Simulation(enrichment(), seed=7, until=30.0).run("enrichment")
    second = Simulation(enrichment(), seed=7, until=30.0).run("enrichment")

    assert first.sink("store").records > 5_000
    assert first.to_json() == second.to_json()


def test_a_simulation_run_again_binds_its_models_afresh_and_reports_the_same() -> None:
    simulation = Simulation(enrichment(checkpoints=None), seed=7, until=10.0)

    assert simulation.run("again").to_json() == simulation.run("again").to_json()


def test_another_seed_gives_another_report() -> None:
    seven = Simulation(enrichment(), seed=7, until=30.0).run("enrichment")
    eight = Simulation(enrichment(), seed=8, until=30.0).run("enrichment")

    assert seven.to_json() != eight.to_json()


def test_mm1_mean_in_engine_latency_and_utilisation_match_queueing_theory() -> None:
    # Poisson arrivals at 80/s, exponential service at 100/s: W = 1 / (mu - lambda) = 50 ms
    # and rho = 0.8; an hour holds some 288,000 customers (W's standard error is about 2%).
    report = Simulation(mm1(arrivals=80.0, service=100.0), seed=1, until=HOUR).run("mm1")

    latency = report.sink("server").in_engine_latency
    (server,) = report.of("server")
    assert latency.count > 280_000
    assert latency.mean == pytest.approx(0.050, rel=0.05)
    assert server.busy_ratio == pytest.approx(0.8, rel=0.02)


@pytest.fixture(scope="module")
def classic_hour():
    return Simulation(classic(), seed=7, until=HOUR).run("classic")


def test_a_sink_of_100_per_second_commits_100_per_second_whatever_comes_in(classic_hour) -> None:
    assert classic_hour.sink("out").throughput == pytest.approx(100.0, abs=1.0)


def test_the_source_of_the_classic_scenario_is_backpressured_most_of_the_time(classic_hour) -> None:
    (source,) = classic_hour.of("events")
    (sink,) = classic_hour.of("out")

    assert source.backpressured_ratio > 0.85
    assert sink.busy_ratio > 0.95


def test_the_classic_scenario_names_the_sink_as_the_bottleneck(classic_hour) -> None:
    assert classic_hour.bottleneck is not None
    assert classic_hour.bottleneck.uids == ("out",)
    assert "'out'" in classic_hour.to_table().splitlines()[-1]


def test_event_time_lag_grows_by_nine_tenths_of_a_second_per_second(classic_hour) -> None:
    assert classic_hour.sink("out").event_time_lag_growth == pytest.approx(0.9, abs=0.01)


def test_in_engine_latency_stays_bounded_by_what_the_channels_hold(classic_hour) -> None:
    # An admitted record waits behind at most the channel (2,048 records) and five batches
    # of 512: one the source's fetch task holds, two fetched (READ_AHEAD), one being sent,
    # one being written; 4,608 records at 100/s.
    bound = (2_048 + (3 + READ_AHEAD) * 512) / 100.0 + 1e-6
    sink = classic_hour.sink("out")
    assert sink.in_engine_latency.max is not None
    assert sink.in_engine_latency.max <= bound
    assert sink.event_time_lag.max is not None
    assert sink.event_time_lag.max > 3_000.0  # while the lag grew without bound


def test_a_declared_cpu_cost_keeps_its_operator_busy_that_share_of_the_time() -> None:
    env = StreamEnvironment()
    (
        env.from_source(ArrivalSource(ConstantRate(100.0)), uid="events")
        .map(CpuCost(0.004), uid="parse")
        .disable_chaining()
        .sink_to(ServiceSink(Constant(0.0)), uid="out")
    )

    report = Simulation(env, seed=1, until=20.0).run("cpu")

    (parse,) = report.of("parse")
    assert parse.busy_ratio == pytest.approx(0.4, abs=0.01)


def test_every_second_of_a_subtask_is_busy_backpressured_or_idle() -> None:
    report = Simulation(classic(), seed=1, until=30.0).run("classic")

    for subtask in report.subtasks:
        seconds = zip(
            subtask.busy_time_ms_per_second,
            subtask.backpressured_time_ms_per_second,
            subtask.idle_time_ms_per_second,
            strict=True,
        )
        assert all(sum(parts) == pytest.approx(1_000.0) for parts in seconds)


def test_without_a_channel_the_report_says_why_it_names_no_bottleneck() -> None:
    env = StreamEnvironment()
    env.from_source(ArrivalSource(ConstantRate(1_000.0)), uid="events").sink_to(
        ServiceSink(Constant(0.01)), uid="out"
    )

    report = Simulation(env, seed=1, until=10.0).run("chained")

    assert report.bottleneck is None
    assert "disable_chaining()" in report.bottleneck_reason


def test_a_job_that_ends_first_is_reported_up_to_its_end() -> None:
    env = StreamEnvironment()
    env.from_source(ArrivalSource(ConstantRate(10.0), limit=25), uid="events").sink_to(
        ServiceSink(Constant(0.001)), uid="out"
    )

    report = Simulation(env, seed=1, until=60.0).run("bounded")

    assert report.sink("out").records == 25
    assert report.times[-1] == pytest.approx(2.501, abs=0.01)


def test_a_failing_job_makes_run_raise_its_error() -> None:
    env = StreamEnvironment()
    env.from_source(ArrivalSource(ConstantRate(10.0)), uid="events").map(
        lambda arrival: 1 / 0, uid="broken"
    ).sink_to(ServiceSink(Constant(0.001)), uid="out")

    with pytest.raises(OperatorError, match="operator 'broken'"):
        Simulation(env, seed=1, until=60.0).run("failing")


def test_the_environment_gets_its_own_clock_back_after_a_run() -> None:
    env = classic()
    clock = env.clock

    Simulation(env, seed=1, until=1.0).run("classic")

    assert env.clock is clock


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"until": 0.0}, "until must be a finite number of virtual seconds; got 0.0"),
        ({"until": 10.0, "report_every": 20.0}, "report_every must be more than 0 and at most"),
    ],
)
def test_options_that_cannot_work_are_refused(options, message) -> None:
    with pytest.raises(ValueError, match=message):
        Simulation(classic(), seed=1, **options)


def test_on_trio_the_classic_scenario_names_the_sink_at_100_per_second() -> None:
    report = Simulation(classic(), seed=7, until=120.0, backend="trio").run("classic")

    assert report.sink("out").throughput == pytest.approx(100.0, abs=1.0)
    assert report.bottleneck is not None and report.bottleneck.uids == ("out",)


def test_on_trio_the_same_seed_gives_a_byte_identical_json_report() -> None:
    first = Simulation(enrichment(checkpoints=None), seed=7, until=10.0, backend="trio")
    second = Simulation(enrichment(checkpoints=None), seed=7, until=10.0, backend="trio")

    assert first.run("enrichment").to_json() == second.run("enrichment").to_json()


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="backend must be 'asyncio' or 'trio'; got 'curio'"):
        Simulation(classic(), seed=1, until=1.0, backend="curio")  # type: ignore[arg-type]


def test_in_real_time_the_same_job_and_models_report_on_the_system_clock() -> None:
    env = StreamEnvironment()
    env.from_source(ArrivalSource(ConstantRate(50.0)), uid="events").sink_to(
        ServiceSink(Constant(0.001)), uid="out"
    )

    report = Simulation(env, seed=1, until=1.0, report_every=0.5).run_in_real_time("real")

    assert report.times == pytest.approx((0.5, 1.0), abs=0.2)
    out = report.sink("out")
    assert 40 <= out.records <= 51
    assert out.in_engine_latency.p50 is not None and out.in_engine_latency.p50 >= 0.001
