"""Service: an async_map's remote call, answering after its latency, a few at a time."""

from __future__ import annotations

import anyio
import pytest

from lockgate.engine import AsyncRetry, OperatorError, StreamEnvironment
from lockgate.engine.simulation import (
    ArrivalSource,
    Constant,
    ConstantRate,
    ModelContext,
    Outage,
    Service,
    ServiceSink,
    ServiceUnavailable,
    Simulation,
    VirtualClock,
)
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


def test_a_call_during_an_outage_raises_and_one_after_it_answers() -> None:
    service = Service(Constant(0.01), outages=[Outage(0.0, 1.0)])

    async def main(clock: VirtualClock) -> tuple[str, float]:
        service.bind(ModelContext("enrich", 1, clock))
        with pytest.raises(ServiceUnavailable, match="Service 'enrich' is in an outage"):
            await service("early")
        await clock.sleep(1.0)
        return await service("late"), clock.now()

    assert run_virtual(main) == ("late", 1.01)
    assert (service.calls, service.refused) == (2, 1)


def test_a_call_during_a_stall_answers_once_the_outage_is_over() -> None:
    service = Service(Constant(0.01), outages=[Outage(0.0, 2.0, kind="stall")])

    assert answered_at(service, 1) == [(0, 2.01)]


def enriched(service: Service, **options) -> StreamEnvironment:
    env = StreamEnvironment()
    (
        env.from_source(ArrivalSource(ConstantRate(100.0), limit=500), uid="events")
        .async_map(service, capacity=10, uid="enrich", **options)
        .sink_to(ServiceSink(Constant(0.001)), uid="out")
    )
    return env


def test_a_job_whose_function_retries_commits_every_record_despite_errors() -> None:
    service = Service(Constant(0.01), errors=0.2)
    retry = AsyncRetry(attempts=10, initial_backoff=0.01, seed=1)

    report = Simulation(enriched(service, retry=retry), seed=1, until=60.0).run("retried")

    assert report.sink("out").records == 500
    assert service.refused > 50  # some 20% of the calls failed, and were retried


def test_a_job_whose_function_does_not_retry_fails_with_the_services_error() -> None:
    env = enriched(Service(Constant(0.01), outages=[Outage(2.0, 1.0)]))

    with pytest.raises(OperatorError, match="operator 'enrich'") as raised:
        Simulation(env, seed=1, until=60.0).run("failing")
    assert isinstance(raised.value.__cause__, ServiceUnavailable)
