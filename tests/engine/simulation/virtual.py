"""Running a test's coroutine on virtual time, with the clock models read."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from lockgate.engine.simulation import VirtualClock, VirtualTimeLoop

T = TypeVar("T")


def run_virtual(main: Callable[[VirtualClock], Awaitable[T]]) -> T:
    """Run ``main(clock)`` on a fresh VirtualTimeLoop; the clock reads its virtual time."""

    async def with_clock() -> Any:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualTimeLoop)
        return await main(VirtualClock(loop.time, asyncio.sleep, loop.spend))

    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(with_clock())
