"""ServiceSink: writes that take a service time per record, on as many servers as allowed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from lockgate.engine import AsyncRetry, OperatorError, StreamEnvironment
from lockgate.engine.io.sinks import SinkContext
from lockgate.engine.simulation import (
    Arrival,
    ArrivalSource,
    Constant,
    ConstantRate,
    ModelContext,
    Outage,
    ServiceSink,
    ServiceUnavailable,
    Simulation,
    VirtualClock,
)
from tests.engine.simulation.virtual import run_virtual


class Commits:
    def __init__(self) -> None:
        self.seen: list[tuple[str, int, float]] = []

    def committed(self, uid: str, arrivals: Sequence[Arrival], times: Sequence[float]) -> None:
        self.seen += [(uid, a.seq, round(t, 9)) for a, t in zip(arrivals, times, strict=True)]


def arrivals(count: int) -> list[Arrival]:
    return [Arrival(seq, None, 0.0, 0.0) for seq in range(count)]


def write(sink: ServiceSink, records: list[Any]) -> tuple[Commits, float]:
    commits = Commits()
    sink.bind(ModelContext("store", 1, commits=commits))

    async def main(clock: VirtualClock) -> float:
        writer = sink.create_writer(SinkContext("store", 0, 1, clock))
        await writer.write(records)
        return clock.now()

    return commits, run_virtual(main)


def test_one_server_serves_a_batch_in_order_and_returns_when_the_last_is_served() -> None:
    commits, returned = write(ServiceSink(Constant(0.1)), arrivals(3))

    assert commits.seen == [("store", 0, 0.1), ("store", 1, 0.2), ("store", 2, 0.3)]
    assert returned == pytest.approx(0.3)


def test_two_servers_serve_two_records_at_a_time() -> None:
    commits, returned = write(ServiceSink(Constant(0.1), concurrency=2), arrivals(4))

    assert [time for _, _, time in commits.seen] == [0.1, 0.1, 0.2, 0.2]
    assert returned == pytest.approx(0.2)


def test_records_that_are_not_arrivals_take_their_time_without_being_measured() -> None:
    commits, returned = write(ServiceSink(Constant(0.1)), ["plain", *arrivals(1)])

    assert commits.seen == [("store", 0, 0.2)]
    assert returned == pytest.approx(0.2)


def test_a_concurrency_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="ServiceSink: concurrency must be 1 or more; got 0"):
        ServiceSink(Constant(0.1), concurrency=0)


def test_per_batch_one_draw_serves_the_whole_batch() -> None:
    commits, returned = write(ServiceSink(Constant(0.005), per="batch"), arrivals(3))

    assert [time for _, _, time in commits.seen] == [0.005] * 3
    assert returned == pytest.approx(0.005)


def stored(sink: ServiceSink) -> StreamEnvironment:
    env = StreamEnvironment()
    (
        env.from_source(ArrivalSource(ConstantRate(100.0), tick=0.1, limit=1_000), uid="events")
        .sink_to(sink, uid="store")
        .disable_chaining()
    )
    return env


def test_writes_during_a_stall_wait_for_its_end_and_the_backlog_drains_after() -> None:
    sink = ServiceSink(Constant(0.001), outages=[Outage(2.0, 3.0, kind="stall")])

    report = Simulation(stored(sink), seed=1, until=30.0).run("stall")

    store = report.sink("store")
    assert store.records == 1_000
    assert store.in_engine_latency.max == pytest.approx(3.0, abs=0.05)  # held through it


def test_a_write_refused_without_retry_fails_the_job_naming_the_sink() -> None:
    sink = ServiceSink(Constant(0.001), outages=[Outage(2.0, 3.0)])

    with pytest.raises(OperatorError, match="operator 'store'") as raised:
        Simulation(stored(sink), seed=1, until=30.0).run("refused")
    assert isinstance(raised.value.__cause__, ServiceUnavailable)


def test_a_sink_with_retry_writes_again_until_the_store_takes_it() -> None:
    retry = AsyncRetry(attempts=20, initial_backoff=0.05, max_backoff=0.5)
    sink = ServiceSink(Constant(0.001), errors=0.1, outages=[Outage(2.0, 3.0)], retry=retry)

    report = Simulation(stored(sink), seed=1, until=30.0).run("retried")

    assert report.sink("store").records == 1_000
    assert sink.availability.refused > 10
