"""ByteLink: a control connection's bytes, on the event loop's own streams.

On asyncio the link is asyncio's ``StreamReader``/``StreamWriter`` pair, not anyio's Unix
socket stream: that one waits for a readable socket with a future that a cancelled receive
leaves to the selector, which may then set a result on the cancelled future (anyio 4.16;
asyncio reports an ``InvalidStateError`` in a callback). asyncio's streams are transports
and protocols, safe to cancel. On trio the link is anyio's stream, which is.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Protocol

import anyio
from anyio.abc import SocketAttribute, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = ["ByteLink", "accepted_link", "connect_link"]


class ByteLink(Protocol):
    """Bytes both ways on one connection: whole sends, exact receives."""

    async def send(self, data: bytes) -> None:
        """Send all of ``data``."""

    async def receive_exactly(self, size: int) -> bytes:
        """Return the next ``size`` bytes; raise ``anyio.IncompleteRead`` at the end."""

    async def aclose(self) -> None:
        """Close the connection."""


class _AnyioLink:
    def __init__(self, stream: SocketStream) -> None:
        self._stream = stream
        self._reader = BufferedByteReceiveStream(stream)

    async def send(self, data: bytes) -> None:
        await self._stream.send(data)

    async def receive_exactly(self, size: int) -> bytes:
        return await self._reader.receive_exactly(size)

    async def aclose(self) -> None:
        await self._stream.aclose()


class _AsyncioLink:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def send(self, data: bytes) -> None:
        if self._writer.is_closing():
            raise anyio.BrokenResourceError("the connection is closed")
        self._writer.write(data)
        await self._writer.drain()

    async def receive_exactly(self, size: int) -> bytes:
        try:
            return await self._reader.readexactly(size)
        except asyncio.IncompleteReadError:
            raise anyio.IncompleteRead from None

    async def aclose(self) -> None:
        self._writer.close()
        try:
            with anyio.CancelScope(shield=True):
                await self._writer.wait_closed()
        except OSError:  # the other side reset it: closed all the same
            pass


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # trio's loop is running, not asyncio's
        return False
    return True


async def connect_link(path: str) -> ByteLink:
    """Connect to the Unix socket at ``path``."""
    if _on_asyncio():
        return _AsyncioLink(*await asyncio.open_unix_connection(path))
    return _AnyioLink(await anyio.connect_unix(path))


async def accepted_link(stream: SocketStream) -> ByteLink:
    """The link of a connection an anyio listener accepted."""
    if not _on_asyncio():
        return _AnyioLink(stream)
    raw: socket.socket = stream.extra(SocketAttribute.raw_socket)
    own = raw.dup()  # the stream closes its socket; the link keeps a descriptor of its own
    await stream.aclose()
    return _AsyncioLink(*await asyncio.open_unix_connection(sock=own))
