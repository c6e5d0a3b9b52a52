"""VirtualTimeLoop: asyncio on virtual time, jumping to the next timer when nothing can run."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
import pytest

from lockgate.engine.errors import SimulationDeadlock
from lockgate.engine.simulation import VirtualTimeLoop


def run(main: Callable[[], Awaitable[Any]]) -> Any:
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main())


def now() -> float:
    return asyncio.get_running_loop().time()


def test_an_hour_of_sleep_passes_at_once_in_virtual_time() -> None:
    async def main() -> float:
        await asyncio.sleep(3_600.0)
        return now()

    started = time.perf_counter()
    assert run(main) == 3_600.0
    assert time.perf_counter() - started < 1.0


def test_sleepers_wake_in_deadline_order_each_at_its_deadline() -> None:
    woken: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await asyncio.sleep(seconds)
        woken.append((name, now()))

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for name, seconds in [("late", 3.0), ("early", 1.0), ("middle", 2.0)]:
                group.start_soon(sleeper, name, seconds)

    run(main)
    assert woken == [("early", 1.0), ("middle", 2.0), ("late", 3.0)]


def test_time_stands_still_while_callbacks_are_ready() -> None:
    async def main() -> float:
        for _ in range(1_000):
            await asyncio.sleep(0)
        return now()

    assert run(main) == 0.0


def test_a_declared_cpu_cost_lets_virtual_time_pass_at_once() -> None:
    async def main() -> float:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualTimeLoop)
        loop.spend(0.25)
        return now()

    assert run(main) == 0.25


def test_a_negative_cpu_cost_is_refused() -> None:
    loop = VirtualTimeLoop()
    try:
        with pytest.raises(ValueError, match="0 or more seconds; got -1"):
            loop.spend(-1.0)
    finally:
        loop.close()


def test_a_thread_job_is_waited_for_and_costs_no_virtual_time() -> None:
    async def main() -> tuple[str, float]:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualTimeLoop)
        loop.limit_threads(anyio.to_thread.current_default_thread_limiter())
        await asyncio.sleep(5.0)
        answer = await anyio.to_thread.run_sync(lambda: (time.sleep(0.05), "done")[1])
        return answer, now()

    assert run(main) == ("done", 5.0)


def test_what_a_thread_hands_back_runs_after_everything_ready_at_that_instant() -> None:
    order: list[str] = []

    async def busy() -> None:
        for step in range(3):
            await asyncio.sleep(0)
            order.append(f"busy {step}")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualTimeLoop)
        loop.limit_threads(anyio.to_thread.current_default_thread_limiter())
        async with anyio.create_task_group() as group:
            group.start_soon(busy)
            await anyio.to_thread.run_sync(lambda: None)  # done long before busy() is
            order.append("thread")

    run(main)
    assert order == ["busy 0", "busy 1", "busy 2", "thread"]


def test_limited_threads_run_thread_jobs_one_at_a_time() -> None:
    running, most = 0, 0
    lock = threading.Lock()

    def job() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.01)
        with lock:
            running -= 1

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualTimeLoop)
        loop.limit_threads(anyio.to_thread.current_default_thread_limiter())
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(anyio.to_thread.run_sync, job)

    run(main)
    assert most == 1


def test_an_executor_job_is_waited_for_and_costs_no_virtual_time() -> None:
    async def main() -> tuple[int, float]:
        loop = asyncio.get_running_loop()
        answer = await loop.run_in_executor(None, lambda: (time.sleep(0.02), 42)[1])
        return answer, now()

    assert run(main) == (42, 0.0)


def test_a_task_waiting_for_what_nothing_can_give_is_a_deadlock_naming_it() -> None:
    async def forgotten(event: asyncio.Event) -> None:
        await event.wait()

    async def main() -> None:
        await asyncio.sleep(2.0)
        await asyncio.create_task(forgotten(asyncio.Event()), name="forgotten")

    with pytest.raises(SimulationDeadlock) as raised:
        run(main)
    message = str(raised.value)
    assert "deadlocked at virtual time 2.000 s" in message
    assert "forgotten in test_a_task_waiting_for_what_nothing_can_give" in message
    assert "test_loop.py:" in message
