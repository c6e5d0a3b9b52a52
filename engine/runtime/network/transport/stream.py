"""Streams: data-plane connections over TCP or Unix sockets, opened with a handshake.

An address is ``tcp://HOST:PORT`` (port 0 to let the system pick one, when listening) or
``unix:///PATH``. A connection opens with a ``HELLO`` frame each way (the protocol version,
the attempt's token and the worker's name): the connecting side sends first, and the
listening side answers only a peer that showed the right token, so it never shows its
token to a stranger. A peer with another version or a wrong token is refused before
anything it sends is unpickled. The token is a secret the executor gives each worker of
one attempt (``secrets.token_bytes``).
"""

from __future__ import annotations

import hmac
import os
import struct
from contextlib import suppress
from dataclasses import dataclass
from types import TracebackType
from typing import cast
from urllib.parse import urlsplit

import anyio
from anyio.abc import ByteStream, SocketAttribute, SocketListener, SocketStream

from lockgate.engine.errors import ConnectionLost, TransportProtocolError
from lockgate.engine.runtime.network.transport.codec import PROTOCOL_VERSION
from lockgate.engine.runtime.network.transport.connection import Connection
from lockgate.engine.runtime.network.transport.frames import (
    NO_CHANNEL,
    Frame,
    FrameKind,
    FrameReader,
    encode_frame,
)

__all__ = ["DataPlaneListener", "StreamAddress", "connect", "listen"]

_HELLO = struct.Struct("!HH")


@dataclass(frozen=True, slots=True)
class StreamAddress:
    """Where a worker listens: a TCP host and port, or a Unix socket's path."""

    scheme: str
    host: str = ""
    port: int = 0
    path: str = ""

    @classmethod
    def parse(cls, address: str) -> StreamAddress:
        """Read ``tcp://HOST:PORT`` or ``unix:///PATH``."""
        parts = urlsplit(address)
        if parts.scheme == "tcp" and parts.hostname and parts.port is not None:
            return cls("tcp", host=parts.hostname, port=parts.port)
        if parts.scheme == "unix" and parts.path:
            return cls("unix", path=parts.path)
        raise ValueError(
            f"'{address}' is not a data-plane address; use tcp://HOST:PORT or unix:///PATH"
        )

    def __str__(self) -> str:
        if self.scheme == "unix":
            return f"unix://{self.path}"
        return f"tcp://{self.host}:{self.port}"


class DataPlaneListener:
    """Accepts the data-plane connections of other workers at one address.

    ``address`` is where peers connect: with port 0, the port the system picked. Each
    ``accept`` returns one connection once its peer has passed the handshake.
    """

    def __init__(
        self,
        listener: SocketListener,
        address: StreamAddress,
        *,
        token: bytes,
        name: str,
        handshake_timeout: float,
    ) -> None:
        self.address = address
        self.name = name
        self._listener = listener
        self._token = token
        self._timeout = handshake_timeout

    async def accept(self) -> Connection:
        """Wait for the next peer; return its connection (not yet entered)."""
        stream = await self._listener.accept()
        return await _open(stream, self._token, self.name, self._timeout, accepting=True)

    async def aclose(self) -> None:
        """Stop listening; a Unix socket's file is removed."""
        await self._listener.aclose()
        if self.address.scheme == "unix":
            with suppress(FileNotFoundError):
                os.unlink(self.address.path)

    async def __aenter__(self) -> DataPlaneListener:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<DataPlaneListener {self.name!r} at {self.address}>"


async def listen(
    address: str, *, token: bytes, name: str, handshake_timeout: float = 10.0
) -> DataPlaneListener:
    """Listen at ``address`` for peers that show ``token``; ``name`` is this worker's."""
    where = StreamAddress.parse(address)
    if where.scheme == "unix":
        listener: SocketListener = await anyio.create_unix_listener(where.path)
        bound = where
    else:
        multi = await anyio.create_tcp_listener(local_host=where.host, local_port=where.port)
        listener = cast(SocketListener, multi.listeners[0])
        local: tuple[str, int] = listener.extra(SocketAttribute.local_address)  # type: ignore[assignment]
        bound = StreamAddress("tcp", host=local[0], port=local[1])
    return DataPlaneListener(
        listener, bound, token=token, name=name, handshake_timeout=handshake_timeout
    )


async def connect(
    address: str, *, token: bytes, name: str, handshake_timeout: float = 10.0
) -> Connection:
    """Connect to the worker listening at ``address``; return the connection (not entered)."""
    where = StreamAddress.parse(address)
    if where.scheme == "unix":
        stream: SocketStream = await anyio.connect_unix(where.path)
    else:
        stream = await anyio.connect_tcp(where.host, where.port)
    return await _open(stream, token, name, handshake_timeout, accepting=False)


async def _open(
    stream: ByteStream, token: bytes, name: str, limit: float, *, accepting: bool
) -> Connection:
    # The accepting side shows its token only to a peer that has shown it first.
    hello = encode_frame(FrameKind.HELLO, NO_CHANNEL, 0, _hello(name, token))
    reader = FrameReader(name=name)
    try:
        with anyio.fail_after(limit):
            if not accepting:
                await stream.send(hello)
            peer = _check_hello(await _first_frame(stream, reader, name), token, name)
            if accepting:
                await stream.send(hello)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await stream.aclose()
        raise
    return Connection(stream, name=f"{name}<->{peer}", peer=peer, reader=reader)


async def _first_frame(stream: ByteStream, reader: FrameReader, name: str) -> Frame:
    frames: list[Frame] = []
    while not frames:
        try:
            data = await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError) as error:
            raise ConnectionLost(
                f"worker '{name}': the peer closed the connection during the handshake; "
                "it may not be a worker of this job, or it gave up"
            ) from error
        frames = reader.feed(data, limit=1)
    return frames[0]


def _hello(name: str, token: bytes) -> bytes:
    return _HELLO.pack(PROTOCOL_VERSION, len(token)) + token + name.encode()


def _check_hello(frame: Frame, token: bytes, name: str) -> str:
    payload = frame.payload
    if frame.kind is not FrameKind.HELLO or len(payload) < _HELLO.size:
        raise TransportProtocolError(
            f"worker '{name}': the peer opened with a {frame.kind.name} frame, not HELLO; "
            "it is not lockgate's data plane"
        )
    version, size = _HELLO.unpack_from(payload)
    if version != PROTOCOL_VERSION:
        raise TransportProtocolError(
            f"worker '{name}': the peer speaks data-plane version {version}, this worker "
            f"{PROTOCOL_VERSION}; run the same lockgate version on every worker"
        )
    offered = payload[_HELLO.size : _HELLO.size + size]
    if not hmac.compare_digest(offered, token):
        raise TransportProtocolError(
            f"worker '{name}': a peer offered a wrong token, so it is not a worker of this "
            "job's attempt; the connection is refused"
        )
    return payload[_HELLO.size + size :].decode(errors="replace")
