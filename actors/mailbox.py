"""Mailbox: the bounded FIFO queue every actor reads and every data channel is made of."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import anyio

from lockgate.actors.doorbell import Doorbell
from lockgate.actors.errors import EndOfMailbox, MailboxClosed, MailboxEmpty, MailboxFull

__all__ = ["Mailbox", "MailboxStatistics"]

T = TypeVar("T")


def _one(_message: object) -> int:
    return 1


@dataclass(frozen=True, slots=True)
class MailboxStatistics:
    """A snapshot of a mailbox's fill level and traffic.

    ``size`` and ``capacity`` are in the mailbox's unit: messages, or records for a channel.
    """

    name: str
    capacity: int
    size: int
    peak_size: int
    messages: int
    sent: int
    received: int
    senders_waiting: int
    receiver_waiting: bool
    closed: bool
    queued_first: int = 0

    @property
    def fill(self) -> float:
        """How full the mailbox is, from 0.0 to 1.0."""
        return self.size / self.capacity


class Mailbox(Generic[T]):
    """A bounded FIFO queue of messages between tasks of one event loop.

    Messages come out in the order they went in. The mailbox never holds more than
    ``capacity`` units, where ``size_of(message)`` gives each message's units (one by
    default): ``send`` waits until the message fits and ``send_nowait`` raises ``MailboxFull``.
    A message larger than the whole capacity is admitted alone into an empty mailbox, so that
    it cannot wait forever. Neither ``send_nowait`` nor a ``receive`` that finds a message
    yields to the event loop: the fast path costs a few attribute updates.

    ``send_first`` is the one exception to FIFO order: it puts a message ahead of everything
    queued except the messages it put first earlier, which keep their order, and never waits,
    so it may take the mailbox above ``capacity`` (Flink's priority events, such as an
    unaligned checkpoint barrier overtaking the records in a channel).

    ``close()`` ends the stream: later sends raise ``MailboxClosed``; receivers get the
    messages still queued, then ``EndOfMailbox``. An optional ``Doorbell`` rings on every send
    and on close, so one task can wait on several mailboxes at once.
    """

    __slots__ = (
        "_closed",
        "_doorbell",
        "_first",
        "_messages",
        "_peak",
        "_received",
        "_receiver_event",
        "_room_doorbell",
        "_sender_event",
        "_senders_waiting",
        "_sent",
        "_size",
        "_size_of",
        "capacity",
        "name",
    )

    def __init__(
        self,
        capacity: int,
        *,
        size_of: Callable[[T], int] = _one,
        doorbell: Doorbell | None = None,
        name: str = "mailbox",
    ) -> None:
        if capacity < 1:
            raise ValueError(f"mailbox '{name}' needs a capacity of at least 1; got {capacity}")
        self.capacity = capacity
        self.name = name
        self._size_of = size_of
        self._doorbell = doorbell
        self._messages: deque[tuple[T, int]] = deque()
        self._size = 0
        self._peak = 0
        self._sent = 0
        self._received = 0
        self._closed = False
        self._first = 0
        self._senders_waiting = 0
        self._sender_event: anyio.Event | None = None
        self._receiver_event: anyio.Event | None = None
        self._room_doorbell: Doorbell | None = None

    def send_nowait(self, message: T) -> None:
        """Queue ``message`` now, or raise ``MailboxFull`` if it does not fit."""
        self._put(message, self._size_of(message))

    async def send(self, message: T) -> None:
        """Queue ``message``, waiting while the mailbox has no room for it."""
        units = self._size_of(message)
        while not self._fits(units):
            self._check_open()
            await self._wait_for_room()
        self._put(message, units)

    def send_first(self, message: T) -> list[T]:
        """Put ``message`` ahead of every message queued but those put first before it.

        Never waits and never raises ``MailboxFull``: the message is admitted even if the
        mailbox then holds more than ``capacity`` units.

        Returns:
            The messages ``message`` overtook, oldest first (still queued behind it).

        Raises:
            MailboxClosed: the mailbox is closed.
        """
        self._check_open()
        units = self._size_of(message)
        messages, position = self._messages, self._first
        overtaken = [queued for queued, _ in itertools.islice(messages, position, None)]
        messages.insert(position, (message, units))
        self._first += 1
        self._count_in(units)
        return overtaken

    def ring_on_receive(self, doorbell: Doorbell | None) -> None:
        """Ring ``doorbell`` at every receive from now on (``None``: stop).

        A sender that waits for room here and for other mailboxes at once waits on one
        doorbell that they all ring; each ring may be spurious.
        """
        self._room_doorbell = doorbell

    def receive_nowait(self) -> T:
        """Take the oldest message now; raise ``MailboxEmpty`` or ``EndOfMailbox`` if none."""
        if not self._messages:
            if self._closed:
                raise EndOfMailbox(f"mailbox '{self.name}' is closed and drained")
            raise MailboxEmpty(f"mailbox '{self.name}' is empty")
        message, units = self._messages.popleft()
        if self._first:
            self._first -= 1
        self._size -= units
        self._received += 1
        if self._sender_event is not None:
            self._sender_event.set()
        if self._room_doorbell is not None:
            self._room_doorbell.ring()
        return message

    async def receive(self) -> T:
        """Take the oldest message, waiting for one; raise ``EndOfMailbox`` after close."""
        while not self._messages and not self._closed:
            # Receivers share one event, so that close() wakes every one of them.
            event = self._receiver_event = self._receiver_event or anyio.Event()
            try:
                await event.wait()
            finally:
                if self._receiver_event is event:
                    self._receiver_event = None
        return self.receive_nowait()

    def close(self) -> None:
        """End the stream: receivers drain what is queued, then get ``EndOfMailbox``."""
        if self._closed:
            return
        self._closed = True
        self._wake_receiver()
        if self._sender_event is not None:
            self._sender_event.set()

    @property
    def queued_first(self) -> int:
        """How many messages at the head ``send_first`` put there, not yet received."""
        return self._first

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    def __len__(self) -> int:
        return len(self._messages)

    def statistics(self) -> MailboxStatistics:
        """Return the current fill level and traffic counters."""
        return MailboxStatistics(
            name=self.name,
            capacity=self.capacity,
            size=self._size,
            peak_size=self._peak,
            messages=len(self._messages),
            sent=self._sent,
            received=self._received,
            senders_waiting=self._senders_waiting,
            receiver_waiting=self._receiver_event is not None,
            closed=self._closed,
            queued_first=self._first,
        )

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<Mailbox {self.name!r} {self._size}/{self.capacity} {state}>"

    def _fits(self, units: int) -> bool:
        return self._size + units <= self.capacity or not self._messages

    def _check_open(self) -> None:
        if self._closed:
            raise MailboxClosed(f"mailbox '{self.name}' is closed; nothing more can be sent")

    def _put(self, message: T, units: int) -> None:
        self._check_open()
        if not self._fits(units):
            raise MailboxFull(f"mailbox '{self.name}' is full ({self._size}/{self.capacity})")
        self._messages.append((message, units))
        self._count_in(units)

    def _count_in(self, units: int) -> None:
        self._size += units
        self._sent += 1
        if self._size > self._peak:
            self._peak = self._size
        self._wake_receiver()

    def _wake_receiver(self) -> None:
        if self._receiver_event is not None:
            self._receiver_event.set()
        if self._doorbell is not None:
            self._doorbell.ring()

    async def _wait_for_room(self) -> None:
        if self._sender_event is None:
            self._sender_event = anyio.Event()
        event = self._sender_event
        self._senders_waiting += 1
        try:
            await event.wait()
        finally:
            self._senders_waiting -= 1
            if self._sender_event is event:
                self._sender_event = None
