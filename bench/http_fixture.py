"""The HTTP ends of the async I/O benchmark: a delaying server and a lean keep-alive client.

Both are fixtures, not product code, written on asyncio Protocols (uvloop) so that each costs
a few microseconds per request and the engine between them is what gets measured:

- ``serve``: answers ``GET /item/<n>`` with ``<n>`` after ``latency`` seconds (a
  ``call_later`` per request, no task), ``GET /cpu`` with its process's CPU time, anything
  else with 404. Keep-alive; pipelined requests are answered in order.
- ``HttpClient``: HTTP/1.1 ``GET`` over a pool of keep-alive connections, one request at a
  time on each, as any pooled client does. It understands exactly what a server sends that
  frames its bodies with ``Content-Length`` (no chunked encoding, no redirects, no TLS), and
  raises ``HttpError`` for any status but 200.
"""

from __future__ import annotations

import asyncio
import collections
import socket
import time
from typing import Any

from lockgate.engine import run

__all__ = ["HttpClient", "HttpError", "free_port", "serve"]

OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%b"
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
HEAD_END = b"\r\n\r\n"
LENGTH = b"\r\ncontent-length:"


def answer(request_line: bytes) -> bytes:
    """The response to one request line: ``<n>`` for ``/item/<n>``, the CPU time for ``/cpu``."""
    parts = request_line.split(b" ")
    path = parts[1] if len(parts) == 3 else b""
    if path.startswith(b"/item/") and path[6:].isdigit():
        body = path[6:]
    elif path == b"/cpu":
        body = repr(time.process_time()).encode()
    else:
        return NOT_FOUND
    return OK % (len(body), body)


class Responder(asyncio.Protocol):
    """One keep-alive connection: answers each request ``latency`` seconds after it arrived.

    Requests have no body (GET). Pipelined requests are answered in order: each timer sends the
    oldest answer not sent yet, and all timers have the same delay.
    """

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.loop = asyncio.get_running_loop()
        self.transport: Any = None  # uvloop's transports do not subclass asyncio.Transport
        self.buffer = b""
        self.answers: collections.deque[bytes] = collections.deque()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer + data if self.buffer else data
        start = 0
        while (end := buffer.find(HEAD_END, start)) >= 0:
            self.answers.append(answer(buffer[start : buffer.find(b"\r\n", start)]))
            self.loop.call_later(self.latency, self.send_oldest)
            start = end + 4
        self.buffer = buffer[start:]

    def send_oldest(self) -> None:
        response = self.answers.popleft()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(response)


def serve(port: int, latency: float, ready: Any) -> None:
    """Run the HTTP server on 127.0.0.1:``port`` (uvloop when installed) until killed."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        await loop.create_server(lambda: Responder(latency), "127.0.0.1", port, backlog=4096)
        if ready is not None:
            ready.set()
        await asyncio.Event().wait()

    run(main)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class HttpError(Exception):
    """A response whose status is not 200, or a connection that broke before its response."""


def parse_response(buffer: bytes) -> tuple[int, bytes, bytes] | None:
    """Return ``(status, body, rest)`` once ``buffer`` holds a whole response, else ``None``.

    Raises:
        HttpError: the response is not HTTP/1.x or does not say its ``Content-Length``.
    """
    head_end = buffer.find(HEAD_END)
    if head_end < 0:
        return None
    head = buffer[: head_end + 2].lower()
    at = head.find(LENGTH)
    if not head.startswith(b"http/1.") or at < 0:
        raise HttpError(f"not an HTTP/1.x response with a Content-Length: {head[:200]!r}")
    length = int(head[at + len(LENGTH) : head.find(b"\r\n", at + 2)])
    start = head_end + 4
    if len(buffer) < start + length:
        return None
    return int(head[9:12]), buffer[start : start + length], buffer[start + length :]


class _Connection(asyncio.Protocol):
    """One keep-alive connection, one request at a time: ``response`` waits for its answer."""

    def __init__(self) -> None:
        self.transport: Any = None
        self.buffer = b""
        self.response: asyncio.Future[tuple[int, bytes]] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer = self.buffer + data if self.buffer else data
        try:
            parsed = parse_response(self.buffer)
        except HttpError as error:
            self._settle(error)
            self.transport.close()
            return
        if parsed is not None:
            status, body, self.buffer = parsed
            self._settle((status, body))

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self._settle(HttpError(f"the connection closed before the response: {exc!r}"))

    def _settle(self, outcome: tuple[int, bytes] | HttpError) -> None:
        response, self.response = self.response, None
        if response is None or response.done():
            return
        if isinstance(outcome, HttpError):
            response.set_exception(outcome)
        else:
            response.set_result(outcome)


class HttpClient:
    """``GET`` over keep-alive connections to one ``host:port``, opened as needed, reused after."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()

    async def get(self, path: str) -> bytes:
        """Return the body of ``GET path``.

        Raises:
            HttpError: the status is not 200, or the connection broke.
        """
        connection = self._idle.pop() if self._idle else await self._connect()
        response = asyncio.get_running_loop().create_future()
        connection.response = response
        connection.transport.write(
            b"GET %b HTTP/1.1\r\nHost: %b\r\n\r\n" % (path.encode(), self.host.encode())
        )
        status, body = await response
        if connection.transport is not None:
            self._idle.append(connection)
        if status != 200:
            raise HttpError(f"GET {path}: HTTP {status}")
        return body

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(_Connection, self.host, self.port)
        self._open.add(connection)
        return connection

    async def close(self) -> None:
        """Close every connection."""
        for connection in self._open:
            if connection.transport is not None:
                connection.transport.close()
        self._open.clear()
        self._idle.clear()
