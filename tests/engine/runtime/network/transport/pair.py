"""Two workers' connections in one process, over a fresh socket, and what tests share."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from lockgate.actors import Channel, Doorbell, MailboxEmpty
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.events import ChannelItem, CheckpointBarrier, EndOfInput
from lockgate.engine.runtime.network.transport import (
    Connection,
    DataPlaneListener,
    SendingChannel,
    connect,
    listen,
    local_channel,
)

TOKEN = b"the attempt's token, 32 bytes.."
EDGE = ChannelId(1, 0, 0)
TCP_PORTS = range(30300, 30400)  # the ports this project's tests may listen on


@asynccontextmanager
async def connection_pair(scheme: str = "unix") -> AsyncIterator[tuple[Connection, Connection]]:
    """The producer's and the consumer's connections to each other, not yet entered."""
    async with listening(scheme) as listener:
        accepted: list[Connection] = []

        async def accept() -> None:
            accepted.append(await listener.accept())

        async with anyio.create_task_group() as group:
            group.start_soon(accept)
            producer = await connect(str(listener.address), token=TOKEN, name="producer")
        try:
            yield producer, accepted[0]
        finally:
            await producer.aclose()
            await accepted[0].aclose()


@asynccontextmanager
async def listening(scheme: str = "unix") -> AsyncIterator[DataPlaneListener]:
    """The consumer's listener, on a fresh Unix socket or a free port of TCP_PORTS."""
    if scheme == "unix":  # a short path: a socket's path has at most 107 bytes
        folder = Path(tempfile.mkdtemp(prefix="lg", dir="/tmp"))
        try:
            async with await listen(f"unix://{folder}/s", token=TOKEN, name="consumer") as one:
                yield one
        finally:
            shutil.rmtree(folder)
        return
    for port in TCP_PORTS:
        try:
            listener = await listen(f"tcp://127.0.0.1:{port}", token=TOKEN, name="consumer")
        except OSError:
            continue
        async with listener:
            yield listener
        return
    raise RuntimeError(f"no free port in {TCP_PORTS}")


class Overtaken:
    """Collects what unaligned barriers overtook in a receiving end."""

    def __init__(self) -> None:
        self.calls: list[tuple[CheckpointBarrier, list[Any]]] = []

    def __call__(self, barrier: CheckpointBarrier, records: list[Any]) -> None:
        self.calls.append((barrier, records))


class Consumer:
    """A consumer's local channel, read as a subtask reads it: wait on the doorbell, poll."""

    def __init__(self, capacity: int, channel: ChannelId = EDGE) -> None:
        self.channel_id = channel
        self.doorbell = Doorbell()
        self.channel: Channel[ChannelItem] = local_channel(
            channel, capacity, doorbell=self.doorbell
        )

    async def take(self) -> ChannelItem:
        while True:
            try:
                return self.channel.receive_nowait()
            except MailboxEmpty:
                await self.doorbell.wait()

    async def take_all(self, count: int) -> list[ChannelItem]:
        return [await self.take() for _ in range(count)]

    async def take_to_the_end(self) -> list[ChannelItem]:
        """Every item up to and with the end of input."""
        items = [await self.take()]
        while type(items[-1]) is not EndOfInput:
            items.append(await self.take())
        return items


async def finish(sending: SendingChannel, consumer: Consumer) -> list[ChannelItem]:
    """End the channel, as an output gate ends it, and read it to its end."""
    items: list[ChannelItem] = []

    async def read() -> None:
        items.extend(await consumer.take_to_the_end())

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        await sending.send(EndOfInput())
        sending.close()
    return items


async def wait_until(condition: Callable[[], bool], *, within: float = 10.0) -> None:
    """Yield to the event loop until ``condition`` holds; no sleeping."""
    with anyio.fail_after(within):
        while not condition():
            await anyio.lowlevel.checkpoint()
