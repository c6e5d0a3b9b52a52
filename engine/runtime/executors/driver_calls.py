"""Driver calls: how a worker waits for what its ``DriverSide`` calls answer.

``DriverAnswer`` is the answer to an async call, given when its ``DriverReply`` arrives on
the control connection; ``BlockingCalls`` is the worker's second connection, for the calls
that block the worker's event loop until the driver answered (``call_on_driver``).
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

import anyio

from lockgate.engine.errors import JobError
from lockgate.engine.runtime.executors.control_messages import DriverCall, DriverReply, Hello
from lockgate.engine.runtime.executors.frames import decode_length, encode_frame
from lockgate.engine.runtime.executors.shipping import dumps, loads

__all__ = ["BlockingCalls", "DriverAnswer"]


class DriverAnswer:
    """The answer to one call to the driver: set once, awaited once."""

    def __init__(self) -> None:
        self._given = anyio.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def give(self, value: Any, error: BaseException | None) -> None:
        """Answer with ``value``, or with ``error`` to raise."""
        self._value, self._error = value, error
        self._given.set()

    async def wait(self) -> Any:
        """Return the answer once given, or raise its error."""
        await self._given.wait()
        if self._error is not None:
            raise self._error
        return self._value


class BlockingCalls:
    """The worker's second connection: calls that block until the driver answered.

    One call at a time (a lock orders callers), each a ``DriverCall`` frame answered by one
    ``DriverReply`` frame, on a plain blocking socket: the event loop waits for the answer.
    """

    def __init__(self, path: str, worker: int) -> None:
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.connect(path)
        self._lock = threading.Lock()
        self._send(Hello(worker, os.getpid(), channel="calls"))

    def call(self, target: int, method: str, args: tuple[Any, ...]) -> Any:
        """Run ``method(*args)`` on object ``target`` in the driver; its result."""
        with self._lock:
            self._send(DriverCall(0, target, method, args))
            reply: DriverReply = loads(self._receive(decode_length(self._receive(4))))
        if reply.error is not None:
            raise reply.error
        return reply.value

    def close(self) -> None:
        """Close the connection."""
        self._socket.close()

    def _send(self, message: Any) -> None:
        self._socket.sendall(encode_frame(dumps(message)))

    def _receive(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = self._socket.recv(size - len(data))
            if not chunk:
                raise JobError("the driving process closed the connection of blocking calls")
            data += chunk
        return bytes(data)
