"""Subscription: an async iterator over the records a CommittedSink commits."""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Generic, Literal, TypeVar

import anyio.lowlevel

from lockgate.connectors.errors import SubscriberTooSlow
from lockgate.connectors.service.wakeup import Wakeup

__all__ = ["Overflow", "Subscriber", "Subscription"]

T = TypeVar("T")

Overflow = Literal["backpressure", "drop"]


class Subscriber(Generic[T]):
    """A subscription's buffer: the committed records it has not yielded yet, in order.

    Records from the sink's history (``from_beginning``) come first and do not count
    against ``buffer``. Invariant: the records yielded, then those buffered, are exactly
    the records committed since the subscription started, in commit order, each once;
    once dropped, nothing more is buffered, and the iterator raises after the last one.
    """

    def __init__(self, *, buffer: int, overflow: Overflow, history: Iterable[T] = ()) -> None:
        self.bound = buffer
        self.overflow = overflow
        self.dropped: str | None = None
        self.left = False
        self.taken = Wakeup()  # a record was yielded, or the subscriber left
        self._records: deque[T] = deque(history)
        self._backlog = len(self._records)
        self._arrived = Wakeup()

    @property
    def backpressures(self) -> bool:
        """Whether commits wait for room in this buffer."""
        return self.overflow == "backpressure" and not self.left and self.dropped is None

    @property
    def buffered(self) -> int:
        """Records committed and not yet yielded."""
        return len(self._records)

    def has_room(self, count: int) -> bool:
        """Whether ``count`` more records fit (always, into an empty buffer)."""
        waiting = len(self._records) - self._backlog
        return waiting == 0 or waiting + count <= self.bound

    def offer(self, records: list[T], *, describe: str) -> None:
        """Buffer ``records``; a dropping subscriber without room is dropped instead."""
        if self.left or self.dropped is not None:
            return
        if not self.has_room(len(records)):
            self.dropped = (
                f"a subscriber of {describe} fell behind: {len(self._records)} committed "
                f"records waited in its buffer of {self.bound} when {len(records)} more "
                f"committed, so it was dropped (on_overflow='drop'); it yielded every record "
                "before those and will yield none after: subscribe again (from_beginning=True "
                "re-reads what the sink keeps), with a larger buffer, or with "
                "on_overflow='backpressure' to slow the job down instead"
            )
        else:
            self._records.extend(records)
        self._arrived.notify()

    async def receive(self) -> T:
        """The next record, waiting for a commit; raise once dropped and emptied."""
        await anyio.lowlevel.checkpoint()
        while not self._records:
            if self.dropped is not None:
                raise SubscriberTooSlow(self.dropped)
            if self.left:
                raise StopAsyncIteration
            await self._arrived.wait()
        self._backlog = max(0, self._backlog - 1)
        record = self._records.popleft()
        self.taken.notify()
        return record

    def leave(self) -> None:
        """Take nothing more; commits no longer wait for this buffer."""
        self.left = True
        self._records.clear()
        self._arrived.notify()
        self.taken.notify()

    def __repr__(self) -> str:
        state = "left" if self.left else "dropped" if self.dropped else self.overflow
        return f"<Subscriber {state} buffered={len(self._records)}/{self.bound}>"


class Subscription(Generic[T]):
    """The records a ``CommittedSink`` commits, as they commit: ``async for record in ...``.

    Leave with ``aclose()`` (or ``async with sink.subscribe() as records:``); a subscription
    that nobody references any longer leaves by itself, so a ``break`` out of
    ``async for record in sink.subscribe()`` never holds the job back.
    """

    def __init__(self, subscriber: Subscriber[T], leave: Callable[[Subscriber[T]], None]) -> None:
        self._subscriber = subscriber
        self._leave = weakref.finalize(self, leave, subscriber)

    @property
    def buffered(self) -> int:
        """Records committed and not yet yielded."""
        return self._subscriber.buffered

    def __aiter__(self) -> Subscription[T]:
        return self

    async def __anext__(self) -> T:
        """The next committed record, waiting for the next commit.

        Raises:
            SubscriberTooSlow: the subscription was dropped (``on_overflow="drop"``), after
                yielding every record before the commit that did not fit.
            StopAsyncIteration: after ``aclose()``.
        """
        return await self._subscriber.receive()

    async def aclose(self) -> None:
        """Leave: yield nothing more, and no longer hold commits back."""
        self._leave()

    async def __aenter__(self) -> Subscription[T]:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<Subscription {self._subscriber!r}>"
