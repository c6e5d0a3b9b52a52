"""A subscription buffers at most its capacity, never makes the publisher wait, marks the
events it lost in their place, always delivers the job's last event and ends after it."""

from __future__ import annotations

import anyio
import pytest

from lockgate.engine import EventsDropped, EventSubscription, JobFinished, JobStarted


def started(attempt: int, at: float = 0.0) -> JobStarted:
    return JobStarted("job", at, attempt)


FINISHED = JobFinished("job", 9.0, 3)


async def drained(subscription: EventSubscription) -> list[object]:
    with anyio.fail_after(5):
        return [event async for event in subscription]


async def test_events_come_out_in_the_order_they_were_offered() -> None:
    subscription = EventSubscription(capacity=8)
    for attempt in range(3):
        subscription.offer(started(attempt))
    subscription.offer(FINISHED)

    assert await drained(subscription) == [started(0), started(1), started(2), FINISHED]


async def test_a_full_subscription_drops_what_follows_and_marks_the_gap_where_it_was() -> None:
    subscription = EventSubscription(capacity=2)
    for attempt in range(5):
        subscription.offer(started(attempt, at=float(attempt)))
    subscription.offer(FINISHED)

    assert await drained(subscription) == [
        started(0, at=0.0),
        started(1, at=1.0),
        EventsDropped("job", 2.0, 3),  # the time of the first event it lost
        FINISHED,
    ]


async def test_events_after_a_gap_follow_its_marker_once_the_subscriber_made_room() -> None:
    subscription = EventSubscription(capacity=2)
    for attempt in range(3):
        subscription.offer(started(attempt))
    taken = [await anext(subscription), await anext(subscription)]
    subscription.offer(started(3))
    subscription.offer(FINISHED)

    assert taken == [started(0), started(1)]
    assert await drained(subscription) == [EventsDropped("job", 0.0, 1), started(3), FINISHED]


async def test_a_waiting_subscriber_wakes_when_an_event_is_offered() -> None:
    subscription = EventSubscription(capacity=1)
    received: list[object] = []

    async def read() -> None:
        received.extend([event async for event in subscription])

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(read)
            await anyio.wait_all_tasks_blocked()
            subscription.offer(FINISHED)

    assert received == [FINISHED]


async def test_nothing_is_added_after_the_last_event_of_the_job() -> None:
    subscription = EventSubscription(capacity=4)
    subscription.offer(FINISHED)
    subscription.offer(started(4))

    assert subscription.closed
    assert await drained(subscription) == [FINISHED]


async def test_a_closed_subscription_ends_after_the_events_it_holds() -> None:
    subscription = EventSubscription(capacity=4)
    subscription.offer(started(0))
    subscription.close()
    subscription.offer(started(1))

    assert await drained(subscription) == [started(0)]


def test_a_subscription_needs_room_for_one_event() -> None:
    with pytest.raises(ValueError, match="at least 1 event; got 0"):
        EventSubscription(capacity=0)
