"""ArrivalSource: records when the arrival process says, a backlog at once, the same ones
again after a restore."""

from __future__ import annotations

from lockgate.engine.io.sources import SourceContext, SourceReader, SourceSplit
from lockgate.engine.simulation import (
    Arrival,
    ArrivalSource,
    ConstantRate,
    ModelContext,
    Poisson,
    UniformKeys,
    VirtualClock,
)
from tests.engine.simulation.virtual import run_virtual


def reader(
    source: ArrivalSource, clock: VirtualClock, splits: list[SourceSplit] | None = None
) -> SourceReader[Arrival]:
    context = SourceContext("arrivals", 0, 1, clock)
    return source.create_reader(splits or source.create_splits(1), context)


def bound(source: ArrivalSource, seed: int) -> ArrivalSource:
    source.bind(ModelContext("arrivals", seed))
    return source


def test_each_arrival_is_read_when_it_comes_with_its_event_time() -> None:
    async def main(clock: VirtualClock) -> list[list[Arrival]]:
        arrivals = reader(ArrivalSource(ConstantRate(10.0)), clock)
        return [await arrivals.read(512) for _ in range(2)]

    first, second = run_virtual(main)
    assert first == [Arrival(0, None, 0.1, 0.1)]
    assert second == [Arrival(1, None, 0.2, 0.2)]


def test_a_late_read_returns_the_backlog_at_once_admitted_now() -> None:
    async def main(clock: VirtualClock) -> list[Arrival]:
        arrivals = reader(ArrivalSource(ConstantRate(10.0)), clock)
        await arrivals.read(512)  # starts the process
        await clock.sleep(1.0)
        return await arrivals.read(512)

    backlog = run_virtual(main)
    assert [round(a.event_time, 6) for a in backlog] == [
        0.2,
        0.3,
        0.4,
        0.5,
        0.6,
        0.7,
        0.8,
        0.9,
        1.0,
        1.1,
    ]
    assert {a.admitted_at for a in backlog} == {1.1}


def test_a_read_returns_at_most_the_records_asked_for() -> None:
    async def main(clock: VirtualClock) -> int:
        arrivals = reader(ArrivalSource(ConstantRate(1_000.0)), clock)
        await arrivals.read(1)
        await clock.sleep(1.0)
        return len(await arrivals.read(64))

    assert run_virtual(main) == 64


def test_with_a_tick_arrivals_are_admitted_at_the_next_tick() -> None:
    async def main(clock: VirtualClock) -> list[Arrival]:
        return await reader(ArrivalSource(ConstantRate(100.0), tick=0.05), clock).read(512)

    batch = run_virtual(main)
    assert [round(a.event_time, 6) for a in batch] == [0.01, 0.02, 0.03, 0.04, 0.05]
    assert {round(a.admitted_at, 6) for a in batch} == {0.05}


def test_a_limit_ends_the_input_after_that_many_records() -> None:
    async def main(clock: VirtualClock) -> list[int]:
        arrivals = reader(ArrivalSource(ConstantRate(100.0), limit=3), clock)
        return [len(await arrivals.read(2)) for _ in range(4)]

    assert run_virtual(main) == [1, 1, 1, 0]
    assert ArrivalSource(ConstantRate(1.0), limit=3).bounded


def test_a_reader_restored_from_its_splits_goes_on_with_the_same_arrivals() -> None:
    source = bound(ArrivalSource(Poisson(50.0), keys=UniformKeys(10)), seed=3)

    async def straight_on(clock: VirtualClock) -> list[Arrival]:
        arrivals = reader(source, clock)
        return [a for _ in range(6) for a in await arrivals.read(1)]

    async def restored_halfway(clock: VirtualClock) -> list[Arrival]:
        before = reader(source, clock)
        for _ in range(3):
            await before.read(1)
        after = reader(source, clock, splits=before.snapshot_splits())
        return [a for _ in range(3) for a in await after.read(1)]

    expected = run_virtual(straight_on)[3:]
    resumed = run_virtual(restored_halfway)
    assert [(a.seq, a.key, a.event_time) for a in resumed] == [
        (a.seq, a.key, a.event_time) for a in expected
    ]


def test_the_same_seed_draws_the_same_arrivals_and_another_seed_others() -> None:
    def first_five(seed: int) -> list[tuple[float, int | None]]:
        source = bound(ArrivalSource(Poisson(50.0), keys=UniformKeys(100)), seed)

        async def main(clock: VirtualClock) -> list[tuple[float, int | None]]:
            arrivals = reader(source, clock)
            batches = [await arrivals.read(1) for _ in range(5)]
            return [(a.event_time, a.key) for batch in batches for a in batch]

        return run_virtual(main)

    assert first_five(1) == first_five(1)
    assert first_five(1) != first_five(2)
