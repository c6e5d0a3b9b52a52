"""Output gates: how a subtask batches its records and sends them to downstream subtasks."""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeAlias

from lockgate.actors import Channel, MailboxFull
from lockgate.engine.checkpointing.channel_state import ChannelRecords
from lockgate.engine.events import ChannelItem, CheckpointBarrier, EndOfInput, Event
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.runtime.metrics.record_bytes import RecordBytes
from lockgate.engine.runtime.network.partitions import OutputPartition, SidePartitions
from lockgate.engine.time.clock import Clock

__all__ = ["OutputGate", "SendWaiter"]


SendWaiter: TypeAlias = Callable[[Channel[ChannelItem], ChannelItem], Awaitable[None]]
"""Waits until an item may fit in a full channel, doing other urgent work meanwhile."""


class OutputGate:
    """Batches a subtask's output per channel and sends full batches downstream.

    A channel's batch is sent when it holds ``batch_size`` records, when ``flush`` is called
    (after ``buffer_timeout`` or when the subtask runs out of input), and always before an
    event; each channel gets its items in the order they were produced. Sending waits while
    a channel is full: that wait is backpressure, and its time is counted in
    ``backpressured_time``, the wait going on now included. With a ``waiter``, the wait may
    be interrupted to take an unaligned snapshot: ``overtake`` then puts its barrier ahead
    of everything queued and returns what it overtook and what was still unsent, the output
    channel state. Restored output channel state is sent before anything new.

    ``emit`` sends to the partitions of the main output; ``emit_with_side`` also sends side
    records to the partitions of their tags. Everything else (flushes, events, channel
    state) covers every partition, main and side alike. ``records_out`` counts what was
    emitted, main and side, and ``bytes_out`` its size as the data plane would pickle it.
    """

    def __init__(
        self,
        partitions: Sequence[OutputPartition],
        *,
        batch_size: int,
        clock: Clock,
        restored: ChannelRecords | None = None,
    ) -> None:
        self.partitions = list(partitions)
        self._main = [partition for partition in self.partitions if partition.tag is None]
        self._sides = SidePartitions(self.partitions)
        self.batch_size = batch_size
        self.clock = clock
        self.records_out = 0
        self.bytes_out = RecordBytes()
        self._backpressured = 0.0
        self._waiting_since: float | None = None
        self.buffered_since: float | None = None
        self.ended = False
        self.waiter: SendWaiter | None = None
        if restored:
            self._restore(restored)

    async def emit(self, records: list[Any]) -> None:
        """Route records into the channel buffers and send every buffer that became full."""
        self.records_out += len(records)
        if self.records_out >= self.bytes_out.next_sample:
            self.bytes_out.sample(records, self.records_out)
        size = self.batch_size
        partitions = self._main
        for partition in partitions:  # all routed before any wait, for overtake()
            partition.partitioner.route(records, partition.buffers)
        for partition in partitions:
            for index, buffer in enumerate(partition.buffers):
                if len(buffer) >= size:
                    await self._send_full(partition, index)
        if self.buffered_since is None:
            self.buffered_since = self.clock.now()

    async def emit_with_side(
        self, records: list[Any], side: Mapping[OutputTag[Any], list[Any]]
    ) -> None:
        """Route records to the main output and ``side``'s records to their tags' partitions.

        Everything is routed before any wait, so that ``overtake`` finds the side records
        of a batch, like its main records, in the buffers; then every buffer that became
        full is sent. Records without partitions (of a tag, or main) are dropped.
        """
        routed, count = self._sides.route(side)
        self.records_out += count
        main = bool(records and self._main)
        if main:
            routed += self._main
            for partition in self._main:
                partition.partitioner.route(records, partition.buffers)
            self.records_out += len(records)
        if self.records_out >= self.bytes_out.next_sample:
            self._sample_bytes(records if main else [], side)
        for partition in routed:
            for index, buffer in enumerate(partition.buffers):
                if len(buffer) >= self.batch_size:
                    await self._send_full(partition, index)
        if routed and self.buffered_since is None:
            self.buffered_since = self.clock.now()

    async def flush(self) -> None:
        """Send every non-empty buffer now, full or not."""
        for partition in self.partitions:
            for index, buffer in enumerate(partition.buffers):
                outbox = partition.outboxes[index]
                if buffer:
                    partition.buffers[index] = []
                    outbox.append(buffer)
                if outbox:
                    await self._drain(partition.channels[index], outbox)
        self.buffered_since = None

    async def broadcast_event(self, event: Event) -> None:
        """Flush, then send ``event`` on every channel (nothing once the output ended)."""
        if self.ended:
            return
        await self.flush()
        for partition in self.partitions:
            for channel, outbox in zip(partition.channels, partition.outboxes, strict=True):
                outbox.append(event)
                await self._drain(channel, outbox)

    def overtake(self, barrier: CheckpointBarrier) -> ChannelRecords:
        """Put ``barrier`` first on every channel, now; return the output channel state.

        The state of a channel is the records the barrier overtook in it, then those waiting
        in its outbox and buffer: all produced before the snapshot, all delivered after the
        barrier. They stay where they are and are sent as usual.
        """
        if self.ended:
            return {}
        state: ChannelRecords = {}
        for partition in self.partitions:
            for key, channel, outbox, buffer in zip(
                partition.keys,
                partition.channels,
                partition.outboxes,
                partition.buffers,
                strict=True,
            ):
                unsent = [*channel.send_first(barrier), *outbox]
                state[key] = [r for item in unsent if type(item) is list for r in item] + buffer
        return state

    async def end_input(self) -> None:
        """Flush, send ``EndOfInput`` on every channel, and close them."""
        await self.broadcast_event(EndOfInput())
        self.ended = True
        for partition in self.partitions:
            for channel in partition.channels:
                channel.close()

    @property
    def backpressured_time(self) -> float:
        """Seconds spent waiting for room in full channels, up to now."""
        since = self._waiting_since
        waiting = 0.0 if since is None else self.clock.now() - since
        return self._backpressured + waiting

    @property
    def output_fill(self) -> float:
        """How full the channels this gate sends to are together, from 0.0 to 1.0."""
        channels = [channel for partition in self.partitions for channel in partition.channels]
        capacity = sum(channel.capacity for channel in channels)
        held = sum(channel.statistics().size for channel in channels)
        return min(1.0, held / capacity) if capacity else 0.0

    @property
    def buffered(self) -> int:
        """Records held in buffers and outboxes, not yet sent."""
        return sum(
            len(buffer) + sum(len(item) for item in outbox if type(item) is list)
            for partition in self.partitions
            for buffer, outbox in zip(partition.buffers, partition.outboxes, strict=True)
        )

    def _sample_bytes(self, records: list[Any], side: Mapping[OutputTag[Any], list[Any]]) -> None:
        # the batch that brought records_out to the sample: what was routed, as it counts
        routed = [r for tag, tagged in side.items() if tag in self._sides for r in tagged]
        self.bytes_out.sample(records + routed, self.records_out)

    async def _send_full(self, partition: OutputPartition, index: int) -> None:
        buffer = partition.buffers[index]
        size = self.batch_size
        outbox = partition.outboxes[index]
        cut = len(buffer) - len(buffer) % size
        if cut == len(buffer) == size:
            outbox.append(buffer)
            partition.buffers[index] = []
        else:
            outbox.extend(buffer[start : start + size] for start in range(0, cut, size))
            partition.buffers[index] = buffer[cut:]
        await self._drain(partition.channels[index], outbox)

    async def _drain(self, channel: Channel[ChannelItem], outbox: deque[ChannelItem]) -> None:
        # An item leaves the outbox only once sent: overtake() sees it until then.
        while outbox:
            await self._send(channel, outbox[0])
            outbox.popleft()

    async def _send(self, channel: Channel[ChannelItem], item: ChannelItem) -> None:
        try:
            channel.send_nowait(item)
        except MailboxFull:
            self._waiting_since = started = self.clock.now()
            try:
                await self._send_waiting(channel, item)
            finally:
                self._waiting_since = None
                self._backpressured += self.clock.now() - started

    async def _send_waiting(self, channel: Channel[ChannelItem], item: ChannelItem) -> None:
        waiter = self.waiter
        if waiter is None:
            await channel.send(item)
            return
        while True:
            await waiter(channel, item)
            try:
                channel.send_nowait(item)
            except MailboxFull:
                continue
            return

    def _restore(self, restored: ChannelRecords) -> None:
        size = self.batch_size
        places = {
            key: outbox
            for partition in self.partitions
            for key, outbox in zip(partition.keys, partition.outboxes, strict=True)
        }
        unknown = set(restored) - set(places)
        if unknown:
            raise ValueError(
                f"restored channel state for channels this gate does not send to: {unknown}"
            )
        for key, records in restored.items():
            places[key].extend(
                records[start : start + size] for start in range(0, len(records), size)
            )
        if any(restored.values()):
            self.buffered_since = self.clock.now()
