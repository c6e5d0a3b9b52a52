"""VirtualClock: the job's clock in a simulation reads, sleeps and spends virtual time."""

from __future__ import annotations

from lockgate.engine import Clock
from lockgate.engine.simulation import VirtualClock
from lockgate.engine.time.clock import wall_time_of
from tests.engine.simulation.virtual import run_virtual


def test_sleep_and_spend_move_the_clock_by_what_they_are_given() -> None:
    async def main(clock: VirtualClock) -> list[float]:
        seen = [clock.now()]
        await clock.sleep(2.0)
        seen.append(clock.now())
        clock.spend(0.5)
        seen.append(clock.now())
        return seen

    assert run_virtual(main) == [0.0, 2.0, 2.5]


def test_a_virtual_clock_is_a_clock_whose_time_of_day_is_its_own() -> None:
    async def main(clock: VirtualClock) -> tuple[bool, float]:
        await clock.sleep(7.0)
        return isinstance(clock, Clock), wall_time_of(clock)()

    assert run_virtual(main) == (True, 7.0)
