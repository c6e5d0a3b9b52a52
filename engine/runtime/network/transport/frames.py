"""Frames: the length-prefixed units a data-plane connection carries, and their reader ☐.

A frame is a fixed header and a payload::

    length  u32   bytes that follow the length field (header rest + payload)
    kind    u8    FrameKind
    edge    u32   the channel: ChannelId(edge, upstream index, downstream index)
    up      u32
    down    u32
    seq     u64   the frame's number on its channel and direction, from 0 without gaps
    payload       length - 21 bytes

All integers are big-endian. HELLO frames carry no channel (all zeros) and are numbered
on their own.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.errors import TransportProtocolError

__all__ = [
    "HEADER",
    "MAX_FRAME",
    "MAX_PAYLOAD",
    "NO_CHANNEL",
    "Frame",
    "FrameKind",
    "FrameReader",
    "encode_frame",
    "frame_header",
    "out_of_sequence",
]

HEADER = struct.Struct("!IBIIIQ")
"""The header: length, kind, edge, upstream, downstream, sequence."""

_AFTER_LENGTH = HEADER.size - 4
MAX_FRAME = 1 << 30
"""The largest frame a reader accepts (1 GiB): anything longer is a broken stream."""

MAX_PAYLOAD = MAX_FRAME - _AFTER_LENGTH
"""The largest payload a frame carries."""

NO_CHANNEL = ChannelId(0, 0, 0)


class FrameKind(enum.IntEnum):
    """What a frame carries.

    ``DATA`` and ``EVENT`` travel in channel order and spend credits; ``PRIORITY`` (an
    unaligned barrier) is put ahead of everything its channel holds and spends none;
    ``CREDIT`` flows back from the receiving end; ``HELLO`` opens a connection.
    """

    HELLO = 1
    DATA = 2
    EVENT = 3
    PRIORITY = 4
    CREDIT = 5


_KINDS = {kind.value: kind for kind in FrameKind}


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded frame: its kind, channel, sequence number and payload bytes."""

    kind: FrameKind
    channel: ChannelId
    sequence: int
    payload: bytes

    @property
    def size(self) -> int:
        """The bytes the frame took on the connection, header included."""
        return HEADER.size + len(self.payload)


def frame_header(kind: FrameKind, channel: ChannelId, sequence: int, payload_size: int) -> bytes:
    """Return the header of a frame whose payload has ``payload_size`` bytes."""
    edge, upstream, downstream = channel
    return HEADER.pack(_AFTER_LENGTH + payload_size, kind, edge, upstream, downstream, sequence)


def encode_frame(kind: FrameKind, channel: ChannelId, sequence: int, payload: bytes) -> bytes:
    """Return the header of a frame followed by ``payload``."""
    return frame_header(kind, channel, sequence, len(payload)) + payload


def out_of_sequence(
    channel: str, kind: FrameKind, expected: int, got: int
) -> TransportProtocolError:
    """The error for a frame whose sequence number is not the next one of its channel."""
    return TransportProtocolError(
        f"channel '{channel}': a {kind.name} frame numbered {got} came where {expected} "
        "was due; frames were lost or reordered, so the channel cannot go on"
    )


class FrameReader:
    """Cuts a byte stream into frames, however the bytes arrive.

    ``feed`` takes the bytes read so far and returns every frame they complete, in order;
    an incomplete frame stays buffered for the next ``feed``. A length below the header or
    above ``MAX_FRAME``, or an unknown kind, raises ``TransportProtocolError``: the stream
    cannot be read on from there.
    """

    __slots__ = ("_buffer", "_name")

    def __init__(self, *, name: str = "connection") -> None:
        self._buffer = bytearray()
        self._name = name

    def feed(self, data: bytes, *, limit: int | None = None) -> list[Frame]:
        """Append ``data`` and return the frames now complete (at most ``limit`` of them).

        Frames past ``limit`` stay buffered: the next ``feed`` (of ``b""`` if need be)
        returns them.
        """
        buffer = self._buffer
        buffer += data
        frames: list[Frame] = []
        offset, end = 0, len(buffer)
        most = end if limit is None else limit
        view = memoryview(buffer)
        try:
            while end - offset >= HEADER.size and len(frames) < most:
                length, kind, edge, up, down, sequence = HEADER.unpack_from(buffer, offset)
                self._check(length, kind)
                stop = offset + 4 + length
                if stop > end:
                    break
                payload = bytes(view[offset + HEADER.size : stop])
                frames.append(Frame(_KINDS[kind], ChannelId(edge, up, down), sequence, payload))
                offset = stop
        finally:
            view.release()
        del buffer[:offset]
        return frames

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete frame held for the next ``feed``."""
        return len(self._buffer)

    def _check(self, length: int, kind: int) -> None:
        if not _AFTER_LENGTH <= length <= MAX_FRAME:
            raise TransportProtocolError(
                f"{self._name}: a frame of length {length} cannot be read (at least "
                f"{_AFTER_LENGTH}, at most {MAX_FRAME}); the stream is broken or not "
                "lockgate's data plane"
            )
        if kind not in _KINDS:
            raise TransportProtocolError(
                f"{self._name}: a frame of unknown kind {kind}; the peer speaks another "
                "version of the data plane"
            )

    def __repr__(self) -> str:
        return f"<FrameReader {self._name!r} buffered={len(self._buffer)}>"
