"""Input and output gates: how a subtask reads its channels and writes batches to others."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any, TypeAlias

from lockgate.actors import Channel, MailboxEmpty, MailboxFull
from lockgate.engine.clock import Clock
from lockgate.engine.events import ChannelItem, CheckpointBarrier, EndOfInput, Event
from lockgate.engine.partitioning import Partitioner
from lockgate.engine.runtime.barrier_aligner import BarrierAligner, Decision

__all__ = ["GateItem", "InputGate", "OutputGate", "OutputPartition"]

GateItem: TypeAlias = list[Any] | EndOfInput | Decision


class InputGate:
    """Reads a subtask's input channels fairly, one item at a time, without waiting.

    ``poll`` returns the next batch from the channels in turn, a ``TriggerSnapshot`` or
    ``AbortCheckpoint`` decision of the ``BarrierAligner`` when barriers call for one, or
    ``None`` when no channel it may read has anything; the subtask then waits on the doorbell
    its channels ring. Channels the aligner blocks are not read. ``EndOfInput`` is returned
    once, after every channel has delivered its own.
    """

    def __init__(
        self,
        channels: Sequence[Channel[ChannelItem]],
        aligner: BarrierAligner,
        clock: Clock,
    ) -> None:
        self.channels = list(channels)
        self.aligner = aligner
        self.clock = clock
        self.alignment_started_at: dict[int, float] = {}
        self._live = list(enumerate(channels))
        self._next = 0
        self._blocked: frozenset[int] = frozenset()
        self._decisions: deque[GateItem] = deque()

    def poll(self) -> GateItem | None:
        """Return the next batch or decision, or ``None`` if nothing is ready for now."""
        if self._decisions:
            return self._decisions.popleft()
        live, blocked = self._live, self._blocked
        count = len(live)
        for step in range(count):
            position = (self._next + step) % count
            index, channel = live[position]
            if blocked and index in blocked:
                continue
            try:
                item = channel.receive_nowait()
            except MailboxEmpty:
                continue
            self._next = position + 1
            if type(item) is list:
                return item
            return self._on_event(position, index, item)
        return None

    @property
    def buffered(self) -> int:
        """Records waiting in the input channels."""
        return sum(channel.statistics().size for channel in self.channels)

    @property
    def capacity(self) -> int:
        """The records the input channels can hold together."""
        return sum(channel.capacity for channel in self.channels)

    def _on_event(self, position: int, index: int, event: ChannelItem) -> GateItem | None:
        if type(event) is CheckpointBarrier:
            self._note_alignment_start(event)
            self._decide(self.aligner.on_barrier(index, event))
        elif type(event) is EndOfInput:
            del self._live[position]
            self._next = position
            self._decide(self.aligner.on_end_of_input(index))
            if not self._live:
                self._decisions.append(EndOfInput())
        return self.poll()

    def _note_alignment_start(self, barrier: CheckpointBarrier) -> None:
        if barrier.checkpoint_id > self.aligner.last_triggered:
            self.alignment_started_at.setdefault(barrier.checkpoint_id, self.clock.now())

    def _decide(self, decisions: list[Decision]) -> None:
        self._decisions.extend(decisions)
        self._blocked = self.aligner.blocked_channels


class OutputPartition:
    """The channels of one outgoing edge, with a partitioner and a buffer per channel."""

    def __init__(self, partitioner: Partitioner, channels: Sequence[Channel[ChannelItem]]) -> None:
        self.partitioner = partitioner
        self.channels = list(channels)
        self.buffers: list[list[Any]] = [[] for _ in channels]


class OutputGate:
    """Batches a subtask's output per channel and sends full batches downstream.

    A channel's batch is sent when it holds ``batch_size`` records, when ``flush`` is called
    (after ``buffer_timeout`` or when the subtask runs out of input), and always before an
    event. Sending waits while a channel is full: that wait is backpressure, and its time is
    counted in ``backpressured_time``.
    """

    def __init__(
        self, partitions: Sequence[OutputPartition], *, batch_size: int, clock: Clock
    ) -> None:
        self.partitions = list(partitions)
        self.batch_size = batch_size
        self.clock = clock
        self.records_out = 0
        self.backpressured_time = 0.0
        self.buffered_since: float | None = None
        self.ended = False

    async def emit(self, records: list[Any]) -> None:
        """Route records into the channel buffers and send every buffer that became full."""
        self.records_out += len(records)
        size = self.batch_size
        for partition in self.partitions:
            buffers = partition.buffers
            partition.partitioner.route(records, buffers)
            for index, buffer in enumerate(buffers):
                if len(buffer) >= size:
                    await self._send_full(partition, index)
        if self.buffered_since is None:
            self.buffered_since = self.clock.now()

    async def flush(self) -> None:
        """Send every non-empty buffer now, full or not."""
        for partition in self.partitions:
            for index, buffer in enumerate(partition.buffers):
                if buffer:
                    partition.buffers[index] = []
                    await self._send(partition.channels[index], buffer)
        self.buffered_since = None

    async def broadcast_event(self, event: Event) -> None:
        """Flush, then send ``event`` on every channel (nothing once the output ended)."""
        if self.ended:
            return
        await self.flush()
        for partition in self.partitions:
            for channel in partition.channels:
                await self._send(channel, event)

    async def end_input(self) -> None:
        """Flush, send ``EndOfInput`` on every channel, and close them."""
        await self.broadcast_event(EndOfInput())
        self.ended = True
        for partition in self.partitions:
            for channel in partition.channels:
                channel.close()

    @property
    def buffered(self) -> int:
        """Records held in buffers, not yet sent."""
        return sum(len(b) for partition in self.partitions for b in partition.buffers)

    async def _send_full(self, partition: OutputPartition, index: int) -> None:
        buffer = partition.buffers[index]
        size = self.batch_size
        partition.buffers[index] = buffer[len(buffer) - len(buffer) % size :]
        channel = partition.channels[index]
        if len(buffer) == size:
            await self._send(channel, buffer)
            return
        for start in range(0, len(buffer) - size + 1, size):
            await self._send(channel, buffer[start : start + size])

    async def _send(self, channel: Channel[ChannelItem], item: ChannelItem) -> None:
        try:
            channel.send_nowait(item)
        except MailboxFull:
            started = self.clock.now()
            await channel.send(item)
            self.backpressured_time += self.clock.now() - started
