"""JobEvents stamps each lifecycle step with the job and the wall-clock time, tells its
listeners first, hands it to every open subscription, and ends every one after the job's
last event."""

from __future__ import annotations

import anyio

from lockgate.engine import JobCanceled, JobEvent, JobFinished, JobStarted
from lockgate.engine.runtime.job.job_events import JobEvents


def wall_clock() -> float:
    return 1_700_000_000.0


async def drained(events: object) -> list[JobEvent]:
    with anyio.fail_after(5):
        return [event async for event in events]  # type: ignore[attr-defined]


async def test_a_subscriber_gets_the_events_from_its_subscription_on() -> None:
    events = JobEvents("job", wall_clock=wall_clock)
    events.started(0)
    late = events.subscribe(capacity=8)
    events.started(1)
    events.finished(1)

    assert await drained(late) == [
        JobStarted("job", 1_700_000_000.0, 1),
        JobFinished("job", 1_700_000_000.0, 1),
    ]


async def test_a_subscription_taken_after_the_last_event_yields_nothing() -> None:
    events = JobEvents("job", wall_clock=wall_clock)
    events.canceled(0)

    assert await drained(events.subscribe(capacity=8)) == []


async def test_nothing_is_emitted_after_the_last_event() -> None:
    events = JobEvents("job", wall_clock=wall_clock)
    heard: list[JobEvent] = []
    events.listen(heard.append)
    events.canceled(0)
    events.started(1)

    assert heard == [JobCanceled("job", 1_700_000_000.0, 0)]


async def test_listeners_hear_an_event_before_any_subscriber_can_take_it() -> None:
    events = JobEvents("job", wall_clock=wall_clock)
    subscription = events.subscribe(capacity=8)
    buffered_when_heard: list[str] = []
    events.listen(lambda event: buffered_when_heard.append(repr(subscription)))
    events.started(0)

    assert buffered_when_heard == ["<EventSubscription buffered=0/8 dropped=0 closed=False>"]


async def test_closing_ends_every_subscription_without_an_event() -> None:
    events = JobEvents("job", wall_clock=wall_clock)
    subscription = events.subscribe(capacity=8)
    events.close()

    assert await drained(subscription) == []
