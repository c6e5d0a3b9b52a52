"""wait_doorbell: wait for a subtask's doorbell, also rung by room downstream or a deadline."""

from __future__ import annotations

from typing import Any

import anyio

from lockgate.actors import Channel, Doorbell
from lockgate.engine.clock import Clock

__all__ = ["wait_doorbell"]


async def wait_doorbell(
    doorbell: Doorbell,
    clock: Clock,
    *,
    room_in: tuple[Channel[Any], Any] | None = None,
    deadline: float | None = None,
) -> None:
    """Wait until ``doorbell`` rings; ring it also when ``room_in`` has room or at ``deadline``.

    ``room_in`` is a full channel and the item to send to it: a subtask that waits for
    room there still wakes for its control messages and input (which ring its doorbell).
    ``deadline`` is a time on ``clock``, when the subtask has something to do (its alignment
    times out) though nothing rings.
    """
    if room_in is None and deadline is None:
        await doorbell.wait()
        return
    async with anyio.create_task_group() as group:
        if room_in is not None:
            group.start_soon(_ring_when_room, doorbell, *room_in)
        if deadline is not None:
            group.start_soon(_ring_at, doorbell, clock, deadline)
        await doorbell.wait()
        group.cancel_scope.cancel()


async def _ring_when_room(doorbell: Doorbell, channel: Channel[Any], item: Any) -> None:
    await channel.wait_room_for(item)
    doorbell.ring()


async def _ring_at(doorbell: Doorbell, clock: Clock, deadline: float) -> None:
    await clock.sleep(max(0.0, deadline - clock.now()))
    doorbell.ring()
