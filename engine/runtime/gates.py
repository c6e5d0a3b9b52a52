"""Input and output gates: how a subtask reads its channels and writes batches to others."""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeAlias

from lockgate.actors import Channel, MailboxEmpty, MailboxFull
from lockgate.engine.checkpointing.channel_state import ChannelId, ChannelRecords
from lockgate.engine.clock import Clock
from lockgate.engine.events import (
    ChannelItem,
    CheckpointBarrier,
    EndOfInput,
    Event,
    Watermark,
    WatermarkStatus,
)
from lockgate.engine.partitioning import Partitioner
from lockgate.engine.runtime.barrier_aligner import (
    AbortCheckpoint,
    BarrierAligner,
    ChannelStateComplete,
    Decision,
    TriggerUnalignedSnapshot,
)
from lockgate.engine.runtime.input_channel_state import InputChannelState
from lockgate.engine.runtime.side_partitions import SidePartitions
from lockgate.engine.side_outputs import OutputTag
from lockgate.engine.watermarks import WatermarkValve

__all__ = ["GateItem", "InputGate", "OutputGate", "OutputPartition", "SendWaiter"]

GateItem: TypeAlias = list[Any] | Watermark | WatermarkStatus | EndOfInput | Decision


class InputGate:
    """Reads a subtask's input channels fairly, one item at a time, without waiting.

    ``poll`` returns the next batch from the channels in turn, a decision of the
    ``BarrierAligner`` when barriers (or an aligned timeout) call for one, or ``None`` when
    no channel it may read has anything; the subtask then waits on the doorbell its channels
    ring. Channels the aligner blocks are not read. ``EndOfInput`` is returned once, after
    every channel has delivered its own. Watermarks and watermark statuses are combined by
    a ``WatermarkValve``: one is returned when the subtask's watermark advances or its
    status changes. Restored input
    channel state comes out before anything read from the channels; batches read from a
    channel the aligner reports recording are also kept as the channel state of the
    unaligned checkpoint in progress.
    """

    def __init__(
        self,
        channels: Sequence[Channel[ChannelItem]],
        aligner: BarrierAligner,
        clock: Clock,
        in_flight: InputChannelState | None = None,
    ) -> None:
        self.channels = list(channels)
        self.aligner = aligner
        self.clock = clock
        self.in_flight = in_flight or InputChannelState(
            [ChannelId(0, index, 0) for index in range(len(channels))], {}, batch_size=1
        )
        self.alignment_started_at: dict[int, float] = {}
        self.valve = WatermarkValve(len(channels))
        self._live = list(enumerate(channels))
        self._next = 0
        self._blocked: frozenset[int] = frozenset()
        self._recording: frozenset[int] = frozenset()
        self._deadline: float | None = None
        self._decisions: deque[GateItem] = deque()

    def poll(self) -> GateItem | None:
        """Return the next batch or decision, or ``None`` if nothing is ready for now."""
        if self._deadline is not None:
            self._decide(self.aligner.on_time(self.clock.now()))
        if self._decisions:
            return self._decisions.popleft()
        if self.in_flight.has_restored:
            return self.in_flight.next_restored()
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
                if self._recording and index in self._recording:
                    self.in_flight.record(index, item)
                return item
            return self._on_event(position, index, item)
        return None

    def poll_priority(self) -> list[GateItem]:
        """Take the barriers sent first to the channels' heads; return what they decide.

        For a subtask that cannot take a batch now (it waits for room downstream): only
        unaligned barriers, which overtook everything queued, and an alignment that timed
        out are acted on; records stay queued.
        """
        if self._deadline is not None:
            self._decide(self.aligner.on_time(self.clock.now()))
        for index, channel in self._live:
            while channel.queued_first:
                barrier = channel.receive_nowait()
                assert type(barrier) is CheckpointBarrier, "only barriers are sent first"
                self._on_barrier(index, barrier)
        decided = list(self._decisions)
        self._decisions.clear()
        return decided

    def defer(self, item: GateItem) -> None:
        """Return ``item`` (taken by ``poll_priority``) to be polled first."""
        self._decisions.appendleft(item)

    @property
    def alignment_deadline(self) -> float | None:
        """When the pending alignment goes unaligned, if it will."""
        return self._deadline

    @property
    def buffered(self) -> int:
        """Records waiting in the input channels."""
        return sum(channel.statistics().size for channel in self.channels)

    @property
    def capacity(self) -> int:
        """The records the input channels can hold together."""
        return sum(channel.capacity for channel in self.channels)

    def _on_event(self, position: int, index: int, event: ChannelItem) -> GateItem | None:
        if type(event) is Watermark:
            self._decisions.extend(self.valve.on_watermark(index, event))
        elif type(event) is WatermarkStatus:
            self._decisions.extend(self.valve.on_status(index, event))
        elif type(event) is CheckpointBarrier:
            self._on_barrier(index, event)
        elif type(event) is EndOfInput:
            self._on_end(position, index)
        return self.poll()

    def _on_end(self, position: int, index: int) -> None:
        del self._live[position]
        self._next = position
        self._decide(self.aligner.on_end_of_input(index))
        self._decisions.extend(self.valve.on_end(index))
        if not self._live:
            self._decisions.append(EndOfInput())

    def _on_barrier(self, index: int, barrier: CheckpointBarrier) -> None:
        now = self.clock.now()
        if barrier.checkpoint_id > self.aligner.last_triggered:
            self.alignment_started_at.setdefault(barrier.checkpoint_id, now)
        self._decide(self.aligner.on_barrier(index, barrier, now=now))

    def _decide(self, decisions: list[Decision]) -> None:
        aligner, in_flight = self.aligner, self.in_flight
        for decision in decisions:
            match decision:
                case TriggerUnalignedSnapshot(barrier=barrier):
                    in_flight.start(barrier.checkpoint_id)
                case ChannelStateComplete(checkpoint_id=checkpoint_id):
                    in_flight.finish(checkpoint_id)
                case AbortCheckpoint(checkpoint_id=checkpoint_id):
                    in_flight.abort(checkpoint_id)
        self._decisions.extend(decisions)
        self._blocked = aligner.blocked_channels
        self._recording = aligner.recording_channels
        self._deadline = aligner.alignment_deadline


class OutputPartition:
    """The channels of one outgoing edge, with a partitioner, a buffer and an outbox each.

    Records routed to a channel wait in its buffer until a batch is full (or flushed), then
    in its outbox until the channel has room. ``keys`` name the channels in channel state.
    ``tag`` is the side output the edge carries, or ``None`` for the main output.
    """

    def __init__(
        self,
        partitioner: Partitioner,
        channels: Sequence[Channel[ChannelItem]],
        keys: Sequence[ChannelId] | None = None,
        *,
        tag: OutputTag[Any] | None = None,
    ) -> None:
        self.tag = tag
        self.partitioner = partitioner
        self.channels = list(channels)
        self.keys = (
            list(keys) if keys is not None else [ChannelId(0, 0, i) for i in range(len(channels))]
        )
        self.buffers: list[list[Any]] = [[] for _ in channels]
        self.outboxes: list[deque[ChannelItem]] = [deque() for _ in channels]


SendWaiter: TypeAlias = Callable[[Channel[ChannelItem], ChannelItem], Awaitable[None]]
"""Waits until an item may fit in a full channel, doing other urgent work meanwhile."""


class OutputGate:
    """Batches a subtask's output per channel and sends full batches downstream.

    A channel's batch is sent when it holds ``batch_size`` records, when ``flush`` is called
    (after ``buffer_timeout`` or when the subtask runs out of input), and always before an
    event; each channel gets its items in the order they were produced. Sending waits while
    a channel is full: that wait is backpressure, and its time is counted in
    ``backpressured_time``. With a ``waiter``, the wait may be interrupted to take an
    unaligned snapshot: ``overtake`` then puts its barrier ahead of everything queued and
    returns what it overtook and what was still unsent, the output channel state. Restored
    output channel state is sent before anything new.

    ``emit`` sends to the partitions of the main output; ``emit_with_side`` also sends side
    records to the partitions of their tags. Everything else (flushes, events, channel
    state) covers every partition, main and side alike.
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
        self.backpressured_time = 0.0
        self.buffered_since: float | None = None
        self.ended = False
        self.waiter: SendWaiter | None = None
        if restored:
            self._restore(restored)

    async def emit(self, records: list[Any]) -> None:
        """Route records into the channel buffers and send every buffer that became full."""
        self.records_out += len(records)
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
        if records and self._main:
            routed += self._main
            for partition in self._main:
                partition.partitioner.route(records, partition.buffers)
            self.records_out += len(records)
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
    def buffered(self) -> int:
        """Records held in buffers and outboxes, not yet sent."""
        return sum(
            len(buffer) + sum(len(item) for item in outbox if type(item) is list)
            for partition in self.partitions
            for buffer, outbox in zip(partition.buffers, partition.outboxes, strict=True)
        )

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
            started = self.clock.now()
            await self._send_waiting(channel, item)
            self.backpressured_time += self.clock.now() - started

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
