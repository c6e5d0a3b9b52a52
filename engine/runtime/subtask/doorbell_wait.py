"""wait_doorbell: wait for a subtask's doorbell, also rung by room downstream or a deadline."""

from __future__ import annotations

from typing import Any

import anyio

from lockgate.actors import Channel, Doorbell
from lockgate.engine.time.clock import Clock, SystemClock

__all__ = ["wait_doorbell"]


async def wait_doorbell(
    doorbell: Doorbell,
    clock: Clock,
    *,
    room_in: Channel[Any] | None = None,
    deadline: float | None = None,
) -> None:
    """Wait until ``doorbell`` rings; ring it also when ``room_in`` has room or at ``deadline``.

    ``room_in`` is a full channel, which rings the doorbell whenever a message leaves it: a
    subtask that waits for room there still wakes for its control messages and input.
    ``deadline`` is a time on ``clock``, when the subtask has something to do (its alignment
    times out) though nothing rings.
    """
    if room_in is not None:
        room_in.ring_on_receive(doorbell)
    try:
        if deadline is None:
            await doorbell.wait()
        else:
            await _wait_until(doorbell, clock, deadline)
    finally:
        if room_in is not None:
            room_in.ring_on_receive(None)


async def _wait_until(doorbell: Doorbell, clock: Clock, deadline: float) -> None:
    if type(clock) is SystemClock:  # the event loop's own timer: no task to start and cancel
        with anyio.move_on_after(max(0.0, deadline - clock.now())):
            await doorbell.wait()
        return
    async with anyio.create_task_group() as group:
        group.start_soon(_ring_at, doorbell, clock, deadline)
        await doorbell.wait()
        group.cancel_scope.cancel()


async def _ring_at(doorbell: Doorbell, clock: Clock, deadline: float) -> None:
    await clock.sleep(max(0.0, deadline - clock.now()))
    doorbell.ring()
