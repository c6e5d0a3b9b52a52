"""SendingChannel: the producer's end of a channel whose consumer is in another process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

import anyio

from lockgate.actors import Channel, Doorbell, MailboxClosed, MailboxFull, MailboxStatistics
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.errors import ConnectionLost, TransportError
from lockgate.engine.events import ChannelItem, CheckpointBarrier, EndOfInput, item_size
from lockgate.engine.runtime.network.transport.codec import encode_item, encode_priority
from lockgate.engine.runtime.network.transport.credits import CreditStatistics, SendCredits
from lockgate.engine.runtime.network.transport.frame_queue import FrameQueue
from lockgate.engine.runtime.network.transport.frames import (
    MAX_PAYLOAD,
    FrameKind,
    out_of_sequence,
)

__all__ = ["SendingChannel", "SendingStatistics"]


@dataclass(frozen=True, slots=True)
class SendingStatistics:
    """What a sending end has sent: frames, payload bytes, records, and its credits."""

    channel: ChannelId
    frames: int
    bytes: int
    records: int
    priority_frames: int
    credits: CreditStatistics
    ended: bool


class SendingChannel(Channel[ChannelItem]):
    """A channel's sending end: it looks to an ``OutputGate`` like a local ``Channel``.

    ``send_nowait`` sends an item (encodes it and queues its frame on the connection) if
    the credits the receiving end granted admit it, and raises ``MailboxFull`` otherwise;
    ``send`` waits for credits; both make the gate's wait backpressure, as a full local
    channel does. ``send_first`` sends an unaligned barrier ahead of the frames still
    queued on the connection and returns their items, which it overtook. ``ring_on_receive``
    rings a doorbell whenever credits come back. Once the connection is lost every send
    raises ``ConnectionLost`` naming the edge. The end holds no items of its own: what it
    sent is in the connection's queue, on the wire, or in the receiving end.
    """

    __slots__ = (
        "_credit_event",
        "_credit_sequence",
        "_credits",
        "_encoded",
        "_failure",
        "_frames",
        "_priority",
        "_queue",
        "_records",
        "_room",
        "_sent_bytes",
        "channel_id",
        "ended",
    )

    def __init__(
        self, channel_id: ChannelId, queue: FrameQueue, *, capacity: int, name: str
    ) -> None:
        super().__init__(capacity, size_of=item_size, name=name)
        self.channel_id = channel_id
        self.ended = False
        self._queue = queue
        self._credits = SendCredits()
        self._credit_event: anyio.Event | None = None
        self._credit_sequence = 0
        self._room: Doorbell | None = None
        self._encoded: tuple[ChannelItem, FrameKind, bytes] | None = None
        self._failure: str | None = None
        self._frames = self._sent_bytes = self._records = self._priority = 0

    def send_nowait(self, item: ChannelItem) -> None:
        """Send ``item`` now, or raise ``MailboxFull`` if its credits are not there."""
        self._check_open()
        kind, payload = self._encode(item)
        records = item_size(item)
        credits = self._credits
        if not credits.admits(records, len(payload)):
            raise MailboxFull(f"channel '{self.name}' has no credits for {records} records")
        self._encoded = None
        credits.spend(records, len(payload))
        self._queue.put(kind, self.channel_id, payload, item)
        self._frames += 1
        self._sent_bytes += len(payload)
        if kind is FrameKind.DATA:
            self._records += records
        elif type(item) is EndOfInput:
            self.ended = True

    async def send(self, item: ChannelItem) -> None:
        """Send ``item``, waiting while the credits do not admit it."""
        while True:
            try:
                self.send_nowait(item)
            except MailboxFull:
                await self._wait_for_credit()
            else:
                return

    def send_first(self, message: ChannelItem) -> list[ChannelItem]:
        """Send the barrier ``message`` ahead of this channel's queued frames; return them.

        Never waits and spends no credits. Returns the items it overtook, oldest first:
        they stay queued behind it and are sent as usual.
        """
        self._check_open()
        assert type(message) is CheckpointBarrier, "only barriers are sent first"
        self._priority += 1
        return self._queue.put_first(self.channel_id, encode_priority(message))

    def ring_on_receive(self, doorbell: Doorbell | None) -> None:
        """Ring ``doorbell`` whenever credits come back (``None``: stop)."""
        self._room = doorbell

    def grant(self, sequence: int, records: int, size: int) -> None:
        """Take a credit frame from the receiving end: the window first, returns after."""
        if sequence != self._credit_sequence:
            raise out_of_sequence(self.name, FrameKind.CREDIT, self._credit_sequence, sequence)
        self._credit_sequence += 1
        self._credits.grant(records, size)
        self._wake()

    def close(self) -> None:
        """End the stream here: later sends raise ``MailboxClosed``."""
        super().close()
        self._wake()

    def fail(self, message: str) -> None:
        """The connection is lost: every send from now on raises ``ConnectionLost``."""
        self._failure = message
        self._wake()

    def transport_statistics(self) -> SendingStatistics:
        """Return what this end has sent and its credits now."""
        return SendingStatistics(
            self.channel_id,
            self._frames,
            self._sent_bytes,
            self._records,
            self._priority,
            self._credits.statistics(),
            self.ended,
        )

    def statistics(self) -> MailboxStatistics:
        """The channel as a mailbox: its size is the records in flight, its capacity the window."""
        credits = self._credits.statistics()
        return MailboxStatistics(
            name=self.name,
            capacity=credits.window_records or self.capacity,
            size=credits.in_flight_records,
            peak_size=credits.max_in_flight_records,
            messages=0,
            sent=self._frames,
            received=0,
            senders_waiting=0 if self._credit_event is None else 1,
            receiver_waiting=False,
            closed=self.closed,
        )

    def receive_nowait(self) -> NoReturn:
        """A sending end is not read: its items are read from the receiving end."""
        raise TypeError(f"'{self.name}' is a sending end; read its receiving end instead")

    async def receive(self) -> NoReturn:
        """A sending end is not read: its items are read from the receiving end."""
        self.receive_nowait()

    def __repr__(self) -> str:
        state = "failed" if self._failure else "closed" if self.closed else "open"
        return f"<SendingChannel {self.name!r} {self._credits!r} {state}>"

    def _encode(self, item: ChannelItem) -> tuple[FrameKind, bytes]:
        # A send refused for want of credits is retried with the same item: encode it once.
        encoded = self._encoded
        if encoded is not None and encoded[0] is item:
            return encoded[1], encoded[2]
        try:
            kind, payload = encode_item(item)
        except Exception as error:
            raise TransportError(
                f"channel '{self.name}': a batch cannot be pickled to cross to another "
                f"process ({error!r}); make its records picklable (plain data, classes "
                "defined at module level)"
            ) from error
        if len(payload) > MAX_PAYLOAD:
            raise TransportError(
                f"channel '{self.name}': a batch of {item_size(item)} records pickles to "
                f"{len(payload):,} bytes, more than a frame holds ({MAX_PAYLOAD:,}); "
                "lower the job's batch_size"
            )
        self._encoded = (item, kind, payload)
        return kind, payload

    def _check_open(self) -> None:
        if self._failure is not None:
            raise ConnectionLost(self._failure)
        if self.closed:
            raise MailboxClosed(f"channel '{self.name}' is closed; nothing more can be sent")

    async def _wait_for_credit(self) -> None:
        self._check_open()
        event = self._credit_event = self._credit_event or anyio.Event()
        try:
            await event.wait()
        finally:
            if self._credit_event is event:
                self._credit_event = None

    def _wake(self) -> None:
        if self._credit_event is not None:
            self._credit_event.set()
        if self._room is not None:
            self._room.ring()
