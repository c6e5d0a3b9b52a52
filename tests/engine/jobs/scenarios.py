"""Simulation scenarios the tests run: jobs of models, built on a fresh environment."""

from __future__ import annotations

from lockgate.engine import StreamEnvironment
from lockgate.engine.simulation import (
    ArrivalSource,
    Constant,
    ConstantRate,
    CpuCost,
    Exponential,
    LogNormal,
    Poisson,
    Service,
    ServiceSink,
    ZipfKeys,
)


def classic() -> StreamEnvironment:
    """1,000 events per second into a sink that writes 100 per second."""
    env = StreamEnvironment()
    (
        env.from_source(ArrivalSource(ConstantRate(1_000.0)), uid="events")
        .sink_to(ServiceSink(Constant(0.01)), uid="out")
        .disable_chaining()
    )
    return env


def mm1(*, arrivals: float = 80.0, service: float = 100.0) -> StreamEnvironment:
    """M/M/1: Poisson arrivals, exponential service, a channel that never fills."""
    env = StreamEnvironment(channel_capacity=1_000_000)
    (
        env.from_source(ArrivalSource(Poisson(arrivals)), uid="arrivals")
        .sink_to(ServiceSink(Exponential(service)), uid="server")
        .disable_chaining()
    )
    return env


def enrichment(*, checkpoints: float | None = 5.0) -> StreamEnvironment:
    """Poisson arrivals with hot keys, a parse with a CPU cost, a remote call, a slow sink."""
    env = StreamEnvironment(batch_size=64, channel_capacity=256)
    if checkpoints is not None:
        env.enable_checkpointing(checkpoints)
    (
        env.from_source(ArrivalSource(Poisson(300.0), keys=ZipfKeys(100)), uid="events")
        .map(CpuCost(0.0005), uid="parse")
        .disable_chaining()
        .async_map(Service(LogNormal(0.02), concurrency=8), capacity=16, uid="enrich")
        .sink_to(ServiceSink(Exponential(350.0), concurrency=2), uid="store")
        .disable_chaining()
    )
    return env
