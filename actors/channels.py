"""Channel: a bounded point-to-point data channel, measured in the units it carries."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from lockgate.actors.doorbell import Doorbell
from lockgate.actors.mailbox import Mailbox

__all__ = ["Channel"]

T = TypeVar("T")


class Channel(Mailbox[T]):
    """A mailbox from one sender to one receiver, bounded in payload units, not messages.

    A stream channel carries batches of records and counts records (``size_of=len``), so its
    memory use is bounded however the sender batches. Everything else is ``Mailbox``: FIFO,
    ``send`` waits for room, ``send_nowait`` raises ``MailboxFull``, ``close`` ends the stream,
    and ``send_first`` lets an event (an unaligned checkpoint barrier) overtake the batches
    queued, returning them: the sender's in-flight data at that moment.
    """

    __slots__ = ()

    def __init__(
        self,
        capacity: int,
        *,
        size_of: Callable[[T], int],
        doorbell: Doorbell | None = None,
        name: str = "channel",
    ) -> None:
        super().__init__(capacity, size_of=size_of, doorbell=doorbell, name=name)
