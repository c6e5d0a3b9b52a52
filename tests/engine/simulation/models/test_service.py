"""Service: an async_map's remote call, answering after its latency, a few at a time."""

from __future__ import annotations

import anyio
import pytest

from lockgate.engine.simulation import Constant, ModelContext, Service, VirtualClock
from tests.engine.simulation.virtual import run_virtual


def answered_at(service: Service, calls: int) -> list[tuple[int, float]]:
    async def main(clock: VirtualClock) -> list[tuple[int, float]]:
        service.bind(ModelContext("enrich", 1, clock))
        answers: list[tuple[int, float]] = []

        async def call(record: int) -> None:
            answers.append((await service(record), clock.now()))

        async with anyio.create_task_group() as group:
            for record in range(calls):
                group.start_soon(call, record)
        return answers

    return run_virtual(main)


def test_a_call_returns_its_record_after_the_latency() -> None:
    assert answered_at(Service(Constant(0.02)), 1) == [(0, 0.02)]


def test_calls_beyond_the_concurrency_wait_their_turn() -> None:
    answers = answered_at(Service(Constant(0.1), concurrency=2), 4)

    assert [(record, round(time, 9)) for record, time in answers] == [
        (0, 0.1),
        (1, 0.1),
        (2, 0.2),
        (3, 0.2),
    ]


def test_a_service_counts_its_calls_from_its_binding_on() -> None:
    service = Service(Constant(0.01))
    answered_at(service, 3)

    assert service.calls == 3


def test_a_concurrency_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="Service: concurrency must be 1 or more"):
        Service(Constant(0.01), concurrency=0)
