"""Connection: one byte stream between two workers, carrying many channels both ways."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from dataclasses import dataclass
from types import TracebackType

import anyio
import anyio.lowlevel
from anyio.abc import ByteStream, SocketAttribute, TaskGroup

from lockgate.actors import Channel, Doorbell, single_error
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.errors import ConnectionLost, TransportProtocolError
from lockgate.engine.events import ChannelItem
from lockgate.engine.runtime.network.transport.codec import decode_credit, encode_credit
from lockgate.engine.runtime.network.transport.frame_queue import FrameQueue
from lockgate.engine.runtime.network.transport.frames import Frame, FrameKind, FrameReader
from lockgate.engine.runtime.network.transport.local import channel_name
from lockgate.engine.runtime.network.transport.receiving import (
    OvertakenRecords,
    ReceivingEnd,
    ReceivingStatistics,
)
from lockgate.engine.runtime.network.transport.sending import SendingChannel, SendingStatistics

__all__ = ["DEFAULT_WINDOW_BYTES", "Connection", "ConnectionStatistics"]

DEFAULT_WINDOW_BYTES = 16 * 1024 * 1024
"""The bytes a receiving end grants by default, besides its channel's capacity in records."""

READ_SIZE = 256 * 1024
WRITE_LIMIT = 1024 * 1024
_BROKEN = (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


@dataclass(frozen=True, slots=True)
class ConnectionStatistics:
    """A connection's traffic both ways, and each of its channel ends."""

    name: str
    peer: str
    frames_sent: int
    bytes_sent: int
    writes: int
    frames_received: int
    bytes_received: int
    sending: tuple[SendingStatistics, ...]
    receiving: tuple[ReceivingStatistics, ...]


def _first_cause(errors: BaseExceptionGroup[BaseException]) -> BaseException:
    # A body that fails tears down the connections around it, so the peers' ends close:
    # ConnectionLost beside another error is its consequence, not news.
    _, causes = errors.split(ConnectionLost)
    return single_error(causes or errors)


class Connection:
    """Many channels between two workers, both ways, over one byte stream.

    Open every channel end first: ``open_sending`` for a channel whose producer is here,
    ``open_receiving`` for one whose consumer is here; then run the connection with
    ``async with``. While it runs, a reader task delivers the peer's frames to the ends,
    a writer task writes the queued frames, urgent ones first, and credits go back as
    consumers take items. A connection that ends (the peer closes, or it breaks) while a
    channel on it is still open raises ``ConnectionLost`` naming the peer and the open
    edges, from ``async with`` (cancelling its body) and from every later send. Leaving
    ``async with`` once every channel has ended flushes what is queued and closes the
    stream in order; leaving it earlier just stops.
    """

    def __init__(
        self,
        stream: ByteStream,
        *,
        name: str,
        peer: str,
        reader: FrameReader | None = None,
        close_timeout: float = 10.0,
    ) -> None:
        self.name = name
        self.peer = peer
        self.close_timeout = close_timeout
        self._stream = stream
        self._reader = reader or FrameReader(name=name)
        self._queue = FrameQueue()
        self._sending: dict[ChannelId, SendingChannel] = {}
        self._receiving: dict[ChannelId, ReceivingEnd] = {}
        self._room = Doorbell()
        self._eof_sent = anyio.Event()
        self._peer_done = anyio.Event()
        self._stopping = self._failed = False
        raw = stream.extra(SocketAttribute.raw_socket, None)
        # Only a stream on a plain socket reads it itself (transports read for the others).
        self._socket: socket.socket | None = raw if type(raw) is socket.socket else None
        self._context: AbstractAsyncContextManager[Connection] | None = None
        self._frames_sent = self._bytes_sent = self._writes = 0
        self._frames_received = self._bytes_received = 0

    def open_sending(self, channel: ChannelId, *, capacity: int) -> SendingChannel:
        """Open the sending end of ``channel``: an output gate sends to it as to a Channel."""
        self._check_not_started(channel)
        end = SendingChannel(channel, self._queue, capacity=capacity, name=channel_name(channel))
        self._sending[channel] = end
        return end

    def open_receiving(
        self,
        channel: ChannelId,
        local: Channel[ChannelItem],
        *,
        on_overtaken: OvertakenRecords,
        window_bytes: int = DEFAULT_WINDOW_BYTES,
    ) -> ReceivingEnd:
        """Feed ``local`` (the consumer's channel) with what the peer sends on ``channel``.

        The window granted is ``local``'s capacity in records and ``window_bytes``;
        ``on_overtaken`` takes the records unaligned barriers overtake here.
        """
        self._check_not_started(channel)
        end = ReceivingEnd(channel, local, window_bytes=window_bytes, on_overtaken=on_overtaken)
        self._receiving[channel] = end
        return end

    async def __aenter__(self) -> Connection:
        self._context = self._running()
        return await self._context.__aenter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        assert self._context is not None, "the connection was not entered"
        return await self._context.__aexit__(exc_type, exc, traceback)

    async def aclose(self) -> None:
        """Close the stream now: leaving ``async with`` does it, else its owner must."""
        with anyio.CancelScope(shield=True):
            await self._stream.aclose()

    def statistics(self) -> ConnectionStatistics:
        """Return the traffic so far, and every channel end's statistics."""
        return ConnectionStatistics(
            self.name,
            self.peer,
            self._frames_sent,
            self._bytes_sent,
            self._writes,
            self._frames_received,
            self._bytes_received,
            tuple(end.transport_statistics() for end in self._sending.values()),
            tuple(end.statistics() for end in self._receiving.values()),
        )

    def open_edges(self) -> list[ChannelId]:
        """The channels on this connection that have not delivered their end of input."""
        ends: Iterable[SendingChannel | ReceivingEnd] = [
            *self._sending.values(),
            *self._receiving.values(),
        ]
        return [end.channel_id for end in ends if not end.ended]

    def __repr__(self) -> str:
        return (
            f"<Connection {self.name!r} to {self.peer!r} sending={len(self._sending)} "
            f"receiving={len(self._receiving)} queued={len(self._queue)}>"
        )

    @asynccontextmanager
    async def _running(self) -> AsyncIterator[Connection]:
        try:
            async with anyio.create_task_group() as group:
                self._start(group)
                try:
                    yield self
                    await self._finish()
                finally:
                    self._stop_reading()
                    group.cancel_scope.cancel()
        except BaseExceptionGroup as errors:
            raise _first_cause(errors) from None
        finally:
            await self.aclose()

    def _stop_reading(self) -> None:
        # The reader's receive is shielded (anyio's raw-socket streams on asyncio must not
        # have a read cancelled while the socket turns readable: the loop then resolves a
        # cancelled future). Shutting the socket for reading ends that receive instead.
        self._stopping = True
        if self._socket is not None:
            with suppress(OSError):
                self._socket.shutdown(socket.SHUT_RD)

    def _start(self, group: TaskGroup) -> None:
        for end in self._receiving.values():
            credit = encode_credit(end.credits.window, end.credits.window_bytes)
            self._queue.put_urgent(FrameKind.CREDIT, end.channel_id, credit)
            end.channel.ring_on_receive(self._room)
        group.start_soon(self._read)
        group.start_soon(self._write)
        group.start_soon(self._return_credits)

    async def _finish(self) -> None:
        # Each side half-closes on its own once every channel has ended (_write), so that
        # no side waits for another's owner; the stream closes once both have.
        if self.open_edges():  # stopped by its owner before the end: nothing to wait for
            return
        with anyio.move_on_after(self.close_timeout):
            await self._eof_sent.wait()
            await self._peer_done.wait()

    async def _read(self) -> None:
        stream, reader, shielded = self._stream, self._reader, self._socket is not None
        data = b""
        while True:
            try:
                for frame in reader.feed(data):
                    self._dispatch(frame)
            except TransportProtocolError as error:
                self._fail_sending(str(error))  # nothing more goes out on this connection
                raise
            await anyio.lowlevel.checkpoint_if_cancelled()
            try:
                with anyio.CancelScope(shield=shielded):
                    data = await stream.receive(READ_SIZE)
            except anyio.EndOfStream:
                self._peer_closed()
                return
            except _BROKEN as error:
                if not self._stopping:
                    self._lost(f"it broke: {error!r}")
                return
            self._bytes_received += len(data)

    def _peer_closed(self) -> None:
        if not self._stopping:
            self._lost("the peer closed it")
        self._peer_done.set()

    def _dispatch(self, frame: Frame) -> None:
        self._frames_received += 1
        if frame.kind is FrameKind.CREDIT:
            sending = self._sending.get(frame.channel)
            if sending is None:
                raise self._unknown(frame)
            sending.grant(frame.sequence, *decode_credit(frame.payload))
            return
        receiving = self._receiving.get(frame.channel)
        if receiving is None or frame.kind is FrameKind.HELLO:
            raise self._unknown(frame)
        receiving.deliver(frame)
        if receiving.ended:
            self._queue.wake()  # the writer may have nothing left to carry

    async def _write(self) -> None:
        queue, stream = self._queue, self._stream
        while queue or self.open_edges():
            if not queue:
                await queue.wait()
                continue
            data, frames = queue.take(WRITE_LIMIT)
            try:
                await stream.send(data)
            except _BROKEN as error:
                self._lost(f"it broke: {error!r}")
                return
            self._frames_sent += frames
            self._bytes_sent += len(data)
            self._writes += 1
        await self._send_eof()

    async def _send_eof(self) -> None:
        # Every channel has ended and every frame is written: nothing more goes this way.
        with suppress(*_BROKEN):
            await self._stream.send_eof()
        self._eof_sent.set()

    async def _return_credits(self) -> None:
        ends, queue = list(self._receiving.values()), self._queue
        while ends:
            await self._room.wait()
            for end in ends:
                records, size = end.collect()
                if records or size:
                    queue.put_urgent(FrameKind.CREDIT, end.channel_id, encode_credit(records, size))
            ends = [end for end in ends if not (end.ended and end.channel.closed)]

    def _lost(self, cause: str) -> None:
        open_edges = self.open_edges()
        if not open_edges or self._failed:
            return  # nothing left to carry, or the reader or writer already said so
        self._failed = True
        edges = ", ".join(str(edge) for edge in open_edges)
        message = (
            f"the connection '{self.name}' to worker '{self.peer}' was lost ({cause}) while "
            f"{edges} had not ended; the attempt fails, and its restart strategy decides "
            "whether it runs again (see the peer's log for why it went away)"
        )
        self._fail_sending(message)
        raise ConnectionLost(message)

    def _fail_sending(self, message: str) -> None:
        self._failed = True
        for end in self._sending.values():
            end.fail(f"channel '{end.name}' ({end.channel_id}): {message}")

    def _unknown(self, frame: Frame) -> TransportProtocolError:
        return TransportProtocolError(
            f"connection '{self.name}': worker '{self.peer}' sent a {frame.kind.name} frame "
            f"for {frame.channel}, which is not open here; both workers must open the same "
            "channels of the attempt before they run the connection"
        )

    def _check_not_started(self, channel: ChannelId) -> None:
        if self._context is not None:
            raise RuntimeError(
                f"connection '{self.name}': {channel} is opened after the connection started; "
                "open every channel end before entering it"
            )
        if channel in self._sending or channel in self._receiving:
            raise ValueError(f"connection '{self.name}': {channel} is open already")
