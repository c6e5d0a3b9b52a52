"""The report's async_map sections: calls in flight, queued and waiting, their latency, and
Little's law between them."""

from __future__ import annotations

import pytest

from lockgate.engine import StreamEnvironment
from lockgate.engine.simulation import (
    ArrivalSource,
    Constant,
    ConstantRate,
    LogNormal,
    Poisson,
    Service,
    ServiceSink,
    Simulation,
)


def enrichment(arrivals: float, latency: float, capacity: int) -> StreamEnvironment:
    env = StreamEnvironment()
    (
        env.from_source(ArrivalSource(Poisson(arrivals)), uid="events")
        .async_map(Service(LogNormal(latency)), capacity=capacity, uid="enrich")
        .disable_chaining()
        .sink_to(ServiceSink(Constant(0.0005)), uid="out")
        .disable_chaining()
    )
    return env


def test_mean_in_flight_is_throughput_times_mean_latency_within_two_percent() -> None:
    # Little's law, L = lambda * W: the calls in flight sampled every 0.1 s against the
    # calls returned per second and their mean latency, as the engine counted them.
    env = enrichment(arrivals=200.0, latency=0.05, capacity=100)

    report = Simulation(env, seed=1, until=120.0, report_every=0.1).run("little")

    (enrich,) = report.async_map("enrich")
    assert enrich.latency.mean is not None and enrich.mean_in_flight is not None
    assert enrich.throughput == pytest.approx(200.0, rel=0.02)
    assert enrich.mean_in_flight == pytest.approx(enrich.throughput * enrich.latency.mean, rel=0.02)


def test_a_full_operator_has_its_capacity_in_flight_and_serves_capacity_per_latency() -> None:
    env = StreamEnvironment()
    (
        env.from_source(ArrivalSource(ConstantRate(1_000.0)), uid="events")
        .async_map(Service(Constant(0.02)), capacity=10, uid="enrich")
        .disable_chaining()
        .sink_to(ServiceSink(Constant(0.0)), uid="out")
    )

    report = Simulation(env, seed=1, until=10.0).run("full")

    (enrich,) = report.async_map("enrich")
    assert enrich.capacity == 10
    assert max(v for v in enrich.in_flight if v is not None) == 10
    assert enrich.throughput == pytest.approx(500.0, rel=0.02)  # 10 calls per 20 ms
    assert enrich.completed_per_second[-1] == pytest.approx(500.0, rel=0.02)
