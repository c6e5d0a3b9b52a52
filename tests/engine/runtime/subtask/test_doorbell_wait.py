"""wait_doorbell: a subtask's doorbell, rung also by room in a full channel or a deadline."""

from __future__ import annotations

import anyio

from lockgate.actors import Channel, Doorbell
from lockgate.engine import ManualClock
from lockgate.engine.runtime.subtask.doorbell_wait import wait_doorbell


async def waited(
    doorbell: Doorbell,
    clock: ManualClock,
    done: list[str],
    room_in: Channel[list[int]] | None = None,
    deadline: float | None = None,
) -> None:
    await wait_doorbell(doorbell, clock, room_in=room_in, deadline=deadline)
    done.append("woke")


async def test_a_deadline_on_the_clock_rings_the_doorbell() -> None:
    doorbell, clock, done = Doorbell(), ManualClock(), []

    async with anyio.create_task_group() as group:
        group.start_soon(waited, doorbell, clock, done, None, 5.0)
        await anyio.wait_all_tasks_blocked()
        clock.advance(4.0)
        await anyio.wait_all_tasks_blocked()
        assert done == []
        clock.advance(1.0)

    assert done == ["woke"]
    assert clock.sleepers == 0


async def test_a_ring_before_the_deadline_wakes_and_forgets_the_deadline() -> None:
    doorbell, clock, done = Doorbell(), ManualClock(), []

    async with anyio.create_task_group() as group:
        group.start_soon(waited, doorbell, clock, done, None, 5.0)
        await anyio.wait_all_tasks_blocked()
        doorbell.ring()

    assert done == ["woke"]
    assert clock.sleepers == 0


async def test_room_in_a_full_channel_rings_the_doorbell_and_only_while_waiting() -> None:
    doorbell, clock, done = Doorbell(), ManualClock(), []
    channel: Channel[list[int]] = Channel(1, size_of=len)
    channel.send_nowait([1])

    async with anyio.create_task_group() as group:
        group.start_soon(waited, doorbell, clock, done, channel)
        await anyio.wait_all_tasks_blocked()
        assert done == []
        channel.receive_nowait()

    channel.send_nowait([2])
    channel.receive_nowait()
    assert done == ["woke"]
    assert repr(doorbell) == "<Doorbell rung=False waiting=False>"
