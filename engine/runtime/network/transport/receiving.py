"""ReceivingEnd: the consumer's end of a channel whose producer is in another process."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from lockgate.actors import Channel, MailboxFull
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.errors import TransportProtocolError
from lockgate.engine.events import ChannelItem, CheckpointBarrier, EndOfInput, item_size
from lockgate.engine.runtime.network.transport.codec import decode_item
from lockgate.engine.runtime.network.transport.credits import CreditStatistics, ReceiveCredits
from lockgate.engine.runtime.network.transport.frames import Frame, FrameKind, out_of_sequence

__all__ = ["OvertakenRecords", "ReceivingEnd", "ReceivingStatistics"]

OvertakenRecords: TypeAlias = Callable[[CheckpointBarrier, list[Any]], None]
"""Takes the records an unaligned barrier overtook in a receiving end, for channel state."""


@dataclass(frozen=True, slots=True)
class ReceivingStatistics:
    """What a receiving end took in: frames, payload bytes, records, and its credits.

    ``max_buffered_records`` is the most records it held at once, arrived and not yet
    taken by the consumer; ``overtaken_records`` those unaligned barriers overtook here.
    """

    channel: ChannelId
    frames: int
    bytes: int
    records: int
    priority_frames: int
    overtaken_records: int
    buffered_records: int
    max_buffered_records: int
    credits: CreditStatistics
    ended: bool


class ReceivingEnd:
    """Feeds a local ``Channel`` from a connection's frames, and returns credits.

    The consumer reads ``channel`` as it reads any local channel. Items come out in the
    order the sending end sent them; an unaligned barrier (a ``PRIORITY`` frame) is put
    ahead of everything the channel holds, and the records it overtook here are handed to
    ``on_overtaken`` with it: they reached this process before the barrier but are read
    after it, so the consumer's input channel state must hold them (the sending end keeps
    those it had not sent yet as its output channel state). The end never holds more than
    the window it granted: an item the channel has no room for (unaligned barriers take
    room too) waits here until the consumer makes some. ``collect`` counts what the
    consumer took since the last call and returns the credits to send back.
    """

    __slots__ = (
        "_buffered",
        "_bytes",
        "_consumed",
        "_credited",
        "_frames",
        "_max_buffered",
        "_on_overtaken",
        "_overtaken",
        "_pending",
        "_priority",
        "_put",
        "_records",
        "_sequence",
        "channel",
        "channel_id",
        "credits",
        "ended",
    )

    def __init__(
        self,
        channel_id: ChannelId,
        channel: Channel[ChannelItem],
        *,
        window_bytes: int,
        on_overtaken: OvertakenRecords,
    ) -> None:
        self.channel_id = channel_id
        self.channel = channel
        self.credits = ReceiveCredits(channel.capacity, window_bytes)
        self.ended = False
        self._on_overtaken = on_overtaken
        self._credited: deque[tuple[int, int]] = deque()  # per item not yet taken, in order
        self._pending: deque[ChannelItem] = deque()
        self._put = self._consumed = 0  # items put into the channel, and taken from it
        self._sequence = 0
        self._frames = self._bytes = self._records = self._priority = self._overtaken = 0
        self._buffered = self._max_buffered = 0

    def deliver(self, frame: Frame) -> None:
        """Take a ``DATA``, ``EVENT`` or ``PRIORITY`` frame of this channel."""
        if frame.sequence != self._sequence:
            raise out_of_sequence(self.channel.name, frame.kind, self._sequence, frame.sequence)
        if self.ended:
            raise TransportProtocolError(
                f"channel '{self.channel.name}': a {frame.kind.name} frame came after the "
                "end of input; the sending end broke the protocol"
            )
        self._sequence += 1
        self._frames += 1
        self._bytes += len(frame.payload)
        item = decode_item(frame.payload)
        if frame.kind is FrameKind.PRIORITY:
            self._put_first(item)
        else:
            self._accept(item, len(frame.payload))

    def collect(self) -> tuple[int, int]:
        """Count what the consumer took, refill the channel; return the credits to send."""
        channel = self.channel
        taken = self._put - (len(channel) - channel.queued_first) - self._consumed
        self._consumed += taken
        credited, credits = self._credited, self.credits
        for _ in range(taken):
            records, size = credited.popleft()
            credits.consumed(records, size)
            self._buffered -= records
        self._refill()
        if self.ended:
            if not self._pending:
                channel.close()
            return 0, 0  # the sending end has ended: it needs no more credits
        return credits.take_return()

    def statistics(self) -> ReceivingStatistics:
        """Return what this end took in and its credits now."""
        return ReceivingStatistics(
            self.channel_id,
            self._frames,
            self._bytes,
            self._records,
            self._priority,
            self._overtaken,
            self._buffered,
            self._max_buffered,
            self.credits.statistics(),
            self.ended,
        )

    def __repr__(self) -> str:
        return (
            f"<ReceivingEnd {self.channel.name!r} buffered={self._buffered} "
            f"pending={len(self._pending)} {self.credits!r}>"
        )

    def _accept(self, item: ChannelItem, size: int) -> None:
        records = item_size(item)
        if not self.credits.arrives(records, size):
            raise TransportProtocolError(
                f"channel '{self.channel.name}': {records} records ({size} bytes) arrived "
                f"beyond the credits granted ({self.credits!r}); the sending end broke "
                "the protocol"
            )
        self._credited.append((records, size))
        self._buffered += records
        self._max_buffered = max(self._max_buffered, self._buffered)
        if type(item) is list:
            self._records += records
        elif type(item) is EndOfInput:
            self.ended = True
        if self._pending:
            self._pending.append(item)
            return
        try:
            self.channel.send_nowait(item)
        except MailboxFull:
            self._pending.append(item)
            return
        self._put += 1
        if self.ended:
            self.channel.close()  # as a local sending end closes after its end of input

    def _put_first(self, barrier: CheckpointBarrier) -> None:
        assert type(barrier) is CheckpointBarrier, "only barriers are sent first"
        self._priority += 1
        overtaken = [*self.channel.send_first(barrier), *self._pending]
        records = [record for item in overtaken if type(item) is list for record in item]
        self._overtaken += len(records)
        self._on_overtaken(barrier, records)

    def _refill(self) -> None:
        pending, channel = self._pending, self.channel
        while pending:
            try:
                channel.send_nowait(pending[0])
            except MailboxFull:
                return
            pending.popleft()
            self._put += 1
