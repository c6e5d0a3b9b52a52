"""Simulation scenarios the tests run: jobs of models, built on a fresh environment."""

from __future__ import annotations

from typing import Any

from lockgate.engine import (
    KeyedProcessFunction,
    RestartStrategy,
    RuntimeContext,
    StreamEnvironment,
    ValueStateDescriptor,
)
from lockgate.engine.io.sinks import Sink
from lockgate.engine.simulation import (
    Arrival,
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


def numbered(arrival: Arrival) -> tuple[int, int]:
    """An arrival as its key (its number mod 10) and its number."""
    return arrival.seq % 10, arrival.seq


class CountPerKey(KeyedProcessFunction[int, tuple[int, int], tuple[int, int, int]]):
    """Numbers each key's records in keyed state: (key, count so far, record number)."""

    def open(self, context: RuntimeContext) -> None:
        self.count = context.get_state(ValueStateDescriptor("count", default=0))

    def process_element(self, value: tuple[int, int], context: Any) -> Any:
        count = self.count.value() + 1
        self.count.update(count)
        yield (value[0], count, value[1])


def counted_per_key(
    sink: Sink[tuple[int, int, int]], *, records: int = 120, rate: float = 100.0
) -> tuple[StreamEnvironment, list[tuple[int, int, int]]]:
    """Arrivals numbered per key in keyed state (two subtasks), into a two-phase-commit
    sink, checkpointing every 0.2 s; and the records it must commit, exactly once."""
    env = StreamEnvironment(parallelism=2, batch_size=16, channel_capacity=64)
    env.enable_checkpointing(0.2)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=5, delay=0.05))
    (
        env.from_source(
            ArrivalSource(ConstantRate(rate), limit=records), uid="events", parallelism=1
        )
        .map(numbered, uid="number", parallelism=1)
        .key_by(lambda pair: pair[0])
        .process(CountPerKey(), uid="count")
        .sink_to(sink, uid="out")
    )
    expected = [(seq % 10, seq // 10 + 1, seq) for seq in range(records)]
    return env, expected
