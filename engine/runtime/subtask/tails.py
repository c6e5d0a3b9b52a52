"""Tails: where a subtask's records go — its output channels, or a sink writer."""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter
from typing import Any, Protocol

from lockgate.engine.checkpointing.channel_state import ChannelRecords
from lockgate.engine.checkpointing.snapshots import SINK_STATE
from lockgate.engine.events import CheckpointBarrier, Watermark, WatermarkStatus
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.io.sinks import SinkWriter
from lockgate.engine.runtime.metrics.record_bytes import RecordBytes
from lockgate.engine.runtime.network.output_gate import OutputGate, SendWaiter
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.runtime.snapshots.capture import StateCapture

__all__ = ["GateTail", "SinkTail", "StampedSinkTail", "Tail"]

_value = itemgetter(1)  # of a (timestamp, value) pair


class Tail(Protocol):
    """The output side of a subtask."""

    @property
    def records_out(self) -> int:
        """Records passed on."""

    @property
    def bytes_out(self) -> RecordBytes:
        """The pickled size of the records passed on."""

    @property
    def backpressured_time(self) -> float:
        """Seconds spent waiting for room downstream."""

    @property
    def buffered_since(self) -> float | None:
        """When the oldest record held back was buffered, or ``None``."""

    @property
    def output_fill(self) -> float:
        """How full the output channels are together, from 0.0 to 1.0 (0.0 for a sink)."""

    async def open(self) -> None:
        """Prepare to accept records."""

    async def write(self, records: list[Any]) -> None:
        """Pass records on; may wait (backpressure)."""

    async def write_with_side(
        self, records: list[Any], side: Mapping[OutputTag[Any], list[Any]]
    ) -> None:
        """Pass records on, and each side output's records, all taken in before any wait."""

    async def flush(self) -> None:
        """Pass on anything held back for batching."""

    async def end_input(self) -> None:
        """The input has ended: pass on everything and signal the end downstream."""

    async def close(self) -> None:
        """Release resources."""

    async def capture(self, barrier: CheckpointBarrier) -> StateCapture | None:
        """Take the tail's part of a checkpoint (a sink pre-commits here), if any."""

    async def forward(self, barrier: CheckpointBarrier) -> None:
        """Pass a barrier on downstream, after everything before it."""

    async def emit_watermark(self, watermark: Watermark) -> None:
        """Pass a watermark on downstream, after everything before it."""

    async def emit_status(self, status: WatermarkStatus) -> None:
        """Tell downstream that this subtask went idle or is active again."""

    def overtake(self, barrier: CheckpointBarrier) -> ChannelRecords:
        """Pass an unaligned barrier on ahead of everything; return the output channel state."""

    def wait_for_room_with(self, waiter: SendWaiter) -> None:
        """Let ``waiter`` wait for room in full channels (and act on urgent work meanwhile)."""

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Commit what was pre-committed up to ``checkpoint_id``."""

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """``checkpoint_id`` will not complete."""

    @property
    def buffered(self) -> int:
        """Records held back, not yet passed on."""


class GateTail:
    """Sends records to downstream subtasks through an ``OutputGate``."""

    def __init__(self, gate: OutputGate) -> None:
        self.gate = gate
        self.write = gate.emit
        self.write_with_side = gate.emit_with_side
        self.flush = gate.flush
        self.end_input = gate.end_input

    @property
    def records_out(self) -> int:
        """Records emitted downstream."""
        return self.gate.records_out

    @property
    def bytes_out(self) -> RecordBytes:
        """The pickled size of the records emitted downstream."""
        return self.gate.bytes_out

    @property
    def backpressured_time(self) -> float:
        """Seconds spent waiting for room in full channels."""
        return self.gate.backpressured_time

    @property
    def buffered_since(self) -> float | None:
        """When the oldest unsent record was buffered, or ``None``."""
        return self.gate.buffered_since

    @property
    def buffered(self) -> int:
        """Records buffered, not yet sent."""
        return self.gate.buffered

    @property
    def output_fill(self) -> float:
        """How full the output channels are together."""
        return self.gate.output_fill

    async def open(self) -> None:
        """Nothing to open."""

    async def close(self) -> None:
        """Nothing to close: ``end_input`` closed the channels."""

    async def capture(self, barrier: CheckpointBarrier) -> StateCapture | None:
        """Channels hold no state of their own."""
        return None

    async def forward(self, barrier: CheckpointBarrier) -> None:
        """Flush, then send the barrier on every output channel."""
        await self.gate.broadcast_event(barrier)

    async def emit_watermark(self, watermark: Watermark) -> None:
        """Flush, then send the watermark on every output channel."""
        await self.gate.broadcast_event(watermark)

    async def emit_status(self, status: WatermarkStatus) -> None:
        """Flush, then send the status on every output channel."""
        await self.gate.broadcast_event(status)

    def overtake(self, barrier: CheckpointBarrier) -> ChannelRecords:
        """Send the barrier first on every output channel; return what it overtook."""
        return self.gate.overtake(barrier)

    def wait_for_room_with(self, waiter: SendWaiter) -> None:
        """Wait for room in full channels with ``waiter``."""
        self.gate.waiter = waiter

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Nothing to commit."""

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Nothing to undo."""


class SinkTail:
    """Writes records with a sink writer; its errors name the sink operator."""

    backpressured_time = 0.0
    buffered_since: float | None = None
    buffered = 0
    output_fill = 0.0

    def __init__(self, writer: SinkWriter[Any], scope: OperatorScope) -> None:
        self.writer = writer
        self.scope = scope
        self.records_out = 0
        self.bytes_out = RecordBytes()

    async def open(self) -> None:
        """Open the writer."""
        with self.scope:
            await self.writer.open()

    async def write(self, records: list[Any]) -> None:
        """Write a batch."""
        with self.scope:
            await self.writer.write(records)
        self.records_out += len(records)
        if self.records_out >= self.bytes_out.next_sample:
            self.bytes_out.sample(records, self.records_out)

    async def write_with_side(
        self, records: list[Any], side: Mapping[OutputTag[Any], list[Any]]
    ) -> None:
        """Write a batch; a sink operator has no side outputs, so ``side`` is empty."""
        if records:
            await self.write(records)

    async def flush(self) -> None:
        """A sink writer batches on its own."""

    async def end_input(self) -> None:
        """Finish the writer: everything written becomes durable."""
        with self.scope:
            await self.writer.finish()

    async def close(self) -> None:
        """Close the writer."""
        with self.scope:
            await self.writer.close()

    async def capture(self, barrier: CheckpointBarrier) -> StateCapture:
        """Let the writer pre-commit; its state goes under ``SINK_STATE``."""
        with self.scope:
            items = await self.writer.snapshot_state(barrier.checkpoint_id)
            size = self.writer.snapshot_size()
        return StateCapture(self.scope.uid, lists={SINK_STATE: list(items)}, held_records=size)

    async def forward(self, barrier: CheckpointBarrier) -> None:
        """A sink is the end of the line."""

    async def emit_watermark(self, watermark: Watermark) -> None:
        """Hand the watermark to the writer, in order with the records."""
        with self.scope:
            await self.writer.write_watermark(watermark)

    async def emit_status(self, status: WatermarkStatus) -> None:
        """A sink has no downstream to tell."""

    def overtake(self, barrier: CheckpointBarrier) -> ChannelRecords:
        """A sink has no output channels."""
        return {}

    def wait_for_room_with(self, waiter: SendWaiter) -> None:
        """A sink waits inside its writer, which cannot be interrupted."""

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Let the writer commit."""
        with self.scope:
            await self.writer.notify_checkpoint_complete(checkpoint_id)

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Tell the writer."""
        with self.scope:
            await self.writer.notify_checkpoint_aborted(checkpoint_id)


class StampedSinkTail(SinkTail):
    """A sink tail for records with timestamps: the writer gets the values alone."""

    async def write(self, records: list[Any]) -> None:
        """Write a batch of values."""
        await super().write(list(map(_value, records)))
