"""FrameStream: protocol messages over a byte stream, as length-prefixed pickled frames.

A frame is a 4-byte big-endian length, then that many bytes of a pickled message. Sends
from several tasks never interleave (a lock orders them); one task receives.
"""

from __future__ import annotations

from typing import Any

import anyio

from lockgate.engine.runtime.executors.byte_links import ByteLink
from lockgate.engine.runtime.executors.shipping import dumps, loads

__all__ = ["FrameStream", "decode_length", "encode_frame"]

_HEADER = 4
MAX_FRAME = (1 << 32) - 1


def encode_frame(payload: bytes) -> bytes:
    """The frame of ``payload``: its length, then itself.

    Raises:
        ValueError: ``payload`` is longer than a frame can say (4 GiB).
    """
    if len(payload) > MAX_FRAME:
        raise ValueError(f"a frame holds at most {MAX_FRAME} bytes; got {len(payload)}")
    return len(payload).to_bytes(_HEADER, "big") + payload


def decode_length(header: bytes) -> int:
    """The payload length a frame's header gives."""
    return int.from_bytes(header, "big")


class FrameStream:
    """Sends and receives whole messages on one connection, in order."""

    def __init__(self, link: ByteLink) -> None:
        self._link = link
        self._sending = anyio.Lock()

    async def send(self, message: Any) -> None:
        """Send ``message`` as one frame."""
        await self.send_payload(dumps(message))

    async def send_payload(self, payload: bytes) -> None:
        """Send bytes pickled already as one frame."""
        frame = encode_frame(payload)
        async with self._sending:
            await self._link.send(frame)

    async def receive(self) -> Any:
        """Return the next message.

        Raises:
            anyio.EndOfStream, anyio.IncompleteRead: the other side closed the connection.
        """
        length = decode_length(await self._link.receive_exactly(_HEADER))
        return loads(await self._link.receive_exactly(length))

    async def aclose(self) -> None:
        """Close the connection."""
        await self._link.aclose()
