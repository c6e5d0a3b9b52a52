"""Tails: where a subtask's records go — its output channels, or a sink writer."""

from __future__ import annotations

from typing import Any, Protocol

from lockgate.engine.runtime.gates import OutputGate
from lockgate.engine.runtime.scope import OperatorScope
from lockgate.engine.sinks import SinkWriter

__all__ = ["GateTail", "SinkTail", "Tail"]


class Tail(Protocol):
    """The output side of a subtask."""

    @property
    def records_out(self) -> int:
        """Records passed on."""

    @property
    def backpressured_time(self) -> float:
        """Seconds spent waiting for room downstream."""

    @property
    def buffered_since(self) -> float | None:
        """When the oldest record held back was buffered, or ``None``."""

    async def open(self) -> None:
        """Prepare to accept records."""

    async def write(self, records: list[Any]) -> None:
        """Pass records on; may wait (backpressure)."""

    async def flush(self) -> None:
        """Pass on anything held back for batching."""

    async def end_input(self) -> None:
        """The input has ended: pass on everything and signal the end downstream."""

    async def close(self) -> None:
        """Release resources."""

    @property
    def buffered(self) -> int:
        """Records held back, not yet passed on."""


class GateTail:
    """Sends records to downstream subtasks through an ``OutputGate``."""

    def __init__(self, gate: OutputGate) -> None:
        self.gate = gate
        self.write = gate.emit
        self.flush = gate.flush
        self.end_input = gate.end_input

    @property
    def records_out(self) -> int:
        """Records emitted downstream."""
        return self.gate.records_out

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

    async def open(self) -> None:
        """Nothing to open."""

    async def close(self) -> None:
        """Nothing to close: ``end_input`` closed the channels."""


class SinkTail:
    """Writes records with a sink writer; its errors name the sink operator."""

    backpressured_time = 0.0
    buffered_since: float | None = None
    buffered = 0

    def __init__(self, writer: SinkWriter[Any], scope: OperatorScope) -> None:
        self.writer = writer
        self.scope = scope
        self.records_out = 0

    async def open(self) -> None:
        """Open the writer."""
        with self.scope:
            await self.writer.open()

    async def write(self, records: list[Any]) -> None:
        """Write a batch."""
        with self.scope:
            await self.writer.write(records)
        self.records_out += len(records)

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
