"""TrioVirtualClock: trio's run loop on virtual time, by the rules of VirtualTimeLoop."""

from __future__ import annotations

import time

import anyio.to_thread
import trio

from lockgate.engine.simulation.trio_clock import TrioVirtualClock


def test_an_hour_of_sleep_passes_at_once_in_virtual_time() -> None:
    async def main() -> float:
        await trio.sleep(3_600.0)
        return trio.current_time()

    started = time.perf_counter()
    assert trio.run(main, clock=TrioVirtualClock()) == 3_600.0
    assert time.perf_counter() - started < 1.0


def test_a_declared_cpu_cost_lets_virtual_time_pass_at_once() -> None:
    clock = TrioVirtualClock()

    async def main() -> float:
        clock.spend(0.25)
        return trio.current_time()

    assert trio.run(main, clock=clock) == 0.25


def test_a_thread_job_is_waited_for_and_costs_no_virtual_time() -> None:
    clock = TrioVirtualClock()

    async def main() -> tuple[str, float]:
        clock.limit_threads(anyio.to_thread.current_default_thread_limiter())
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.sleep, 10.0)  # a timer the thread must not jump to
            answer = await anyio.to_thread.run_sync(lambda: (time.sleep(0.05), "done")[1])
            seen = trio.current_time()
            nursery.cancel_scope.cancel()
        return answer, seen

    assert trio.run(main, clock=clock) == ("done", 0.0)


def test_nothing_left_to_run_is_a_deadlock_naming_the_waiting_tasks() -> None:
    clock = TrioVirtualClock()
    reports: list[str] = []

    async def forgotten(event: trio.Event) -> None:
        await event.wait()

    async def main() -> None:
        with trio.CancelScope() as scope:

            def deadlocked(message: str) -> None:
                reports.append(message)
                scope.cancel()

            clock.on_deadlock(deadlocked)
            await trio.sleep(2.0)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(forgotten, trio.Event(), name="forgotten")
        clock.on_deadlock(None)

    trio.run(main, clock=clock)
    (message,) = reports
    assert "deadlocked at virtual time 2.000 s" in message
    assert "forgotten (" in message and "test_trio_clock.py" in message
