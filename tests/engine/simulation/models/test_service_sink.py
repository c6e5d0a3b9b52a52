"""ServiceSink: writes that take a service time per record, on as many servers as allowed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from lockgate.engine.io.sinks import SinkContext
from lockgate.engine.simulation import Arrival, Constant, ModelContext, ServiceSink, VirtualClock
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
