import time

import anyio
import pytest

from lockgate.engine import Clock, ManualClock, SystemClock
from lockgate.engine.time.clock import wall_time_of


async def sleep_then_record(clock: ManualClock, seconds: float, woken: list[float]) -> None:
    await clock.sleep(seconds)
    woken.append(seconds)


async def sleep_then_record_name(clock: ManualClock, name: str, woken: list[str]) -> None:
    await clock.sleep(1.0)
    woken.append(name)


def test_a_manual_clock_starts_at_the_given_time():
    assert ManualClock(start=5.0).now() == 5.0


def test_a_manual_clock_moves_only_when_advanced():
    clock = ManualClock()
    before = clock.now()
    clock.advance(2.5)

    assert (before, clock.now()) == (0.0, 2.5)


def test_a_manual_clock_refuses_to_go_back():
    clock = ManualClock()

    with pytest.raises(ValueError, match=r"cannot go back; got advance\(-1\)"):
        clock.advance(-1)


def test_a_refused_advance_leaves_the_time_unchanged():
    clock = ManualClock(start=3.0)
    with pytest.raises(ValueError):
        clock.advance(-1)

    assert clock.now() == 3.0


async def test_a_sleeper_stays_asleep_until_the_clock_reaches_its_deadline():
    clock, woken = ManualClock(), []
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(sleep_then_record, clock, 1.0, woken)
        await anyio.wait_all_tasks_blocked()
        clock.advance(0.999)
        await anyio.wait_all_tasks_blocked()
        assert woken == []
        clock.advance(0.001)

    assert woken == [1.0]


async def test_sleepers_wake_in_deadline_order():
    clock, woken = ManualClock(), []
    async with anyio.create_task_group() as tasks:
        for seconds in (3.0, 1.0, 2.0):
            tasks.start_soon(sleep_then_record, clock, seconds, woken)
        await anyio.wait_all_tasks_blocked()
        clock.advance(5.0)

    assert woken == [1.0, 2.0, 3.0]


async def test_sleepers_wake_in_deadline_order_advance_after_advance():
    # Twenty rounds: a loop that ran tasks woken together in either order (trio does) would
    # get one round wrong.
    clock, woken = ManualClock(), []
    async with anyio.create_task_group() as tasks:
        for _ in range(20):
            for seconds in (2.0, 1.0):
                tasks.start_soon(sleep_then_record, clock, seconds, woken)
            await anyio.wait_all_tasks_blocked()
            clock.advance(2.0)
            await anyio.wait_all_tasks_blocked()

    assert woken == [1.0, 2.0] * 20


async def test_sleepers_with_the_same_deadline_wake_in_the_order_they_fell_asleep():
    clock, woken = ManualClock(), []
    async with anyio.create_task_group() as tasks:
        for name in ("first", "second", "third"):
            tasks.start_soon(sleep_then_record_name, clock, name, woken)
            await anyio.wait_all_tasks_blocked()
        clock.advance(1.0)

    assert woken == ["first", "second", "third"]


async def test_an_advance_wakes_only_the_sleepers_whose_deadline_it_reaches():
    clock, woken = ManualClock(), []
    async with anyio.create_task_group() as tasks:
        for seconds in (1.0, 2.0, 3.0):
            tasks.start_soon(sleep_then_record, clock, seconds, woken)
        await anyio.wait_all_tasks_blocked()
        clock.advance(2.0)
        await anyio.wait_all_tasks_blocked()
        assert woken == [1.0, 2.0]
        clock.advance(1.0)


async def test_a_sleep_counts_from_the_time_it_began():
    clock, woken = ManualClock(start=10.0), []
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(sleep_then_record, clock, 1.0, woken)
        await anyio.wait_all_tasks_blocked()
        clock.advance(0.5)
        await anyio.wait_all_tasks_blocked()
        assert woken == []
        clock.advance(0.5)

    assert woken == [1.0]


async def test_sleepers_counts_the_tasks_sleeping_on_the_clock():
    clock = ManualClock()
    async with anyio.create_task_group() as tasks:
        for seconds in (1.0, 2.0):
            tasks.start_soon(clock.sleep, seconds)
        await anyio.wait_all_tasks_blocked()
        asleep = clock.sleepers
        clock.advance(2.0)

    assert (asleep, clock.sleepers) == (2, 0)


async def test_a_cancelled_sleeper_is_no_longer_counted():
    clock = ManualClock()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(clock.sleep, 1.0)
        await anyio.wait_all_tasks_blocked()
        tasks.cancel_scope.cancel()

    assert clock.sleepers == 0


async def test_sleepers_cancelled_once_their_deadline_came_leave_later_sleepers_waking():
    clock, woken = ManualClock(), []
    async with anyio.create_task_group() as tasks:
        for _ in range(3):
            tasks.start_soon(clock.sleep, 1.0)
        await anyio.wait_all_tasks_blocked()
        clock.advance(1.0)  # due, not all resumed yet, when the cancellation reaches them
        tasks.cancel_scope.cancel()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(sleep_then_record, clock, 1.0, woken)
        await anyio.wait_all_tasks_blocked()
        clock.advance(1.0)

    assert woken == [1.0]


def test_the_manual_and_system_clocks_satisfy_the_clock_protocol():
    assert isinstance(ManualClock(), Clock) and isinstance(SystemClock(), Clock)


def test_a_manual_clock_repr_shows_its_time_and_sleepers():
    clock = ManualClock(start=1.5)

    assert repr(clock) == "<ManualClock now=1.5 sleepers=0>"


def test_the_wall_time_of_the_system_clock_is_the_time_of_day():
    assert wall_time_of(SystemClock()) is time.time


def test_the_wall_time_of_a_manual_clock_is_its_own_time():
    clock = ManualClock(start=42.0)

    assert wall_time_of(clock)() == 42.0
