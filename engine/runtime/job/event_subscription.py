"""EventSubscription: one subscriber's bounded buffer of a job's lifecycle events."""

from __future__ import annotations

from collections import deque

import anyio

from lockgate.engine.runtime.job.lifecycle import EventsDropped, JobEvent

__all__ = ["EventSubscription"]


class EventSubscription:
    """The job's events from the moment of subscribing, in order; iterate with ``async for``.

    It holds at most ``capacity`` events its subscriber has not taken yet, and offering an
    event never waits, so a slow subscriber never slows the job: an event that finds the
    buffer full is dropped and counted, and once the subscriber has made room it gets one
    ``EventsDropped(count)`` in the place of the events it lost, then the events after them.
    The job's last event (``JobFinished``, ``JobFailed`` or ``JobCanceled``) is always
    delivered, and the iteration ends after it. ``close()`` ends it early.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"an event subscription holds at least 1 event; got {capacity}")
        self._capacity = capacity
        self._buffer: deque[JobEvent] = deque()
        self._dropped: EventsDropped | None = None
        self._closed = False
        self._wakeup: anyio.Event | None = None

    @property
    def closed(self) -> bool:
        """Whether no more events will be added (the job ended, or ``close`` was called)."""
        return self._closed

    def offer(self, event: JobEvent) -> None:
        """Add ``event`` if there is room, else count it as dropped; never waits.

        A terminal event is added whatever the room, and closes the subscription.
        """
        if self._closed:
            return
        must_deliver = event.is_terminal
        if self._dropped is not None and (must_deliver or self._has_room()):
            self._buffer.append(self._dropped)
            self._dropped = None
        if must_deliver or self._has_room():
            self._buffer.append(event)
        else:
            self._count_dropped(event)
        self._closed = must_deliver
        self._wake()

    def close(self) -> None:
        """Stop receiving events; the iteration ends once the buffered ones are taken."""
        self._closed = True
        self._wake()

    async def aclose(self) -> None:
        """Close the subscription (for ``contextlib.aclosing``)."""
        self.close()

    def __aiter__(self) -> EventSubscription:
        return self

    async def __anext__(self) -> JobEvent:
        while not self._buffer:
            if self._closed:
                raise StopAsyncIteration
            self._wakeup = anyio.Event()
            await self._wakeup.wait()
        return self._buffer.popleft()

    def _has_room(self) -> bool:
        return len(self._buffer) < self._capacity

    def _count_dropped(self, event: JobEvent) -> None:
        dropped = self._dropped
        count = 1 if dropped is None else dropped.count + 1
        since = event.time if dropped is None else dropped.time
        self._dropped = EventsDropped(event.job, since, count)

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None

    def __repr__(self) -> str:
        dropped = 0 if self._dropped is None else self._dropped.count
        return (
            f"<EventSubscription buffered={len(self._buffer)}/{self._capacity} "
            f"dropped={dropped} closed={self._closed}>"
        )
