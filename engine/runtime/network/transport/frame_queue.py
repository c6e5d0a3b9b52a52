"""FrameQueue: the frames a connection has still to write, urgent ones first."""

from __future__ import annotations

from collections import deque
from typing import TypeAlias

from lockgate.actors import Doorbell
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.events import ChannelItem
from lockgate.engine.runtime.network.transport.frames import HEADER, FrameKind, frame_header

__all__ = ["FrameQueue"]

_Urgent: TypeAlias = tuple[FrameKind, ChannelId, bytes]
_Data: TypeAlias = tuple[FrameKind, ChannelId, bytes, ChannelItem]


class FrameQueue:
    """Frames waiting for a connection's writer, in the order they must be written.

    Urgent frames (credits, unaligned barriers, hello) go before data frames; each kind
    keeps its own order. ``put_first`` queues an unaligned barrier and returns the items its
    channel still has queued here: the barrier overtakes them, as it overtakes the items of
    a local channel. Sequence numbers are given when a frame is taken for writing, per
    channel and direction (data, events and barriers one, credits the other), so a frame
    that overtakes keeps its channel's numbers without gaps on the wire.
    """

    __slots__ = ("_data", "_doorbell", "_sequences", "_urgent")

    def __init__(self) -> None:
        self._urgent: deque[_Urgent] = deque()
        self._data: deque[_Data] = deque()
        self._sequences: dict[tuple[ChannelId, bool], int] = {}
        self._doorbell = Doorbell()

    def put(self, kind: FrameKind, channel: ChannelId, payload: bytes, item: ChannelItem) -> None:
        """Queue the frame of ``item`` (a batch or an event) behind its channel's frames."""
        self._data.append((kind, channel, payload, item))
        self._doorbell.ring()

    def put_urgent(self, kind: FrameKind, channel: ChannelId, payload: bytes) -> None:
        """Queue a credit or hello frame ahead of every data frame."""
        self._urgent.append((kind, channel, payload))
        self._doorbell.ring()

    def put_first(self, channel: ChannelId, payload: bytes) -> list[ChannelItem]:
        """Queue an unaligned barrier ahead of every data frame; return what it overtook.

        Returns:
            The items of ``channel`` queued here, oldest first: still queued behind it.
        """
        self.put_urgent(FrameKind.PRIORITY, channel, payload)
        return [entry[3] for entry in self._data if entry[1] == channel]

    def take(self, limit: int) -> tuple[bytes, int]:
        """Take frames, urgent first, until ``limit`` bytes are passed; return them encoded.

        Returns:
            The frames' bytes, ready to write, and how many frames they are.
        """
        parts: list[bytes] = []
        size = 0
        urgent, data = self._urgent, self._data
        frames = 0
        while urgent and size < limit:
            kind, channel, payload = urgent.popleft()
            parts += (self._header(kind, channel, len(payload)), payload)
            size += HEADER.size + len(payload)
            frames += 1
        while data and size < limit:
            kind, channel, payload, _ = data.popleft()
            parts += (self._header(kind, channel, len(payload)), payload)
            size += HEADER.size + len(payload)
            frames += 1
        return b"".join(parts), frames

    def wake(self) -> None:
        """Wake the writer without a frame: something it decides on changed."""
        self._doorbell.ring()

    async def wait(self) -> None:
        """Return once a frame is queued or ``wake`` was called (at once if one is queued)."""
        if not (self._urgent or self._data):
            await self._doorbell.wait()

    def __len__(self) -> int:
        return len(self._urgent) + len(self._data)

    def __repr__(self) -> str:
        return f"<FrameQueue urgent={len(self._urgent)} data={len(self._data)}>"

    def _header(self, kind: FrameKind, channel: ChannelId, payload_size: int) -> bytes:
        key = (channel, kind is FrameKind.CREDIT)
        sequence = self._sequences.get(key, 0)
        self._sequences[key] = sequence + 1
        return frame_header(kind, channel, sequence, payload_size)
