"""Heads: where a subtask's records come from — its input channels, or a source reader."""

from __future__ import annotations

from typing import Any, Protocol

from anyio.abc import TaskGroup

from lockgate.actors import Doorbell, EndOfMailbox, Mailbox, MailboxEmpty
from lockgate.engine.checkpointing.channel_state import ChannelRecords
from lockgate.engine.checkpointing.snapshots import SPLITS_STATE
from lockgate.engine.events import EndOfInput
from lockgate.engine.io.sources import SourceReader, SourceSplit
from lockgate.engine.runtime.network.input_gate import GateItem, InputGate
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.runtime.snapshots.capture import StateCapture

__all__ = ["GateHead", "Head", "SourceHead"]


class Head(Protocol):
    """The input side of a subtask: polled without waiting; rings the doorbell when ready."""

    async def open(self, doorbell: Doorbell) -> None:
        """Prepare to deliver; ring ``doorbell`` whenever a poll may find something."""

    def start(self, group: TaskGroup) -> None:
        """Start any background work in the subtask's task group."""

    def poll(self) -> GateItem | None:
        """Return the next batch or event, or ``None`` if nothing is ready yet."""

    async def close(self) -> None:
        """Release resources."""

    def capture(self, checkpoint_id: int) -> StateCapture | None:
        """The head's part of checkpoint ``checkpoint_id`` (a source's split positions)."""

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Tell a source that ``checkpoint_id`` completed."""

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Tell a source that ``checkpoint_id`` was aborted."""

    def alignment_started_at(self, checkpoint_id: int, *, default: float) -> float:
        """When the first barrier of ``checkpoint_id`` arrived, or ``default``."""

    @property
    def alignment_deadline(self) -> float | None:
        """When the pending alignment goes unaligned, if it will."""

    def poll_priority(self) -> list[GateItem]:
        """Take what must be acted on even while no batch can be taken (unaligned barriers)."""

    def defer(self, item: GateItem) -> None:
        """Hand back an item ``poll_priority`` returned, to be polled first."""

    def take_channel_state(self, checkpoint_id: int) -> ChannelRecords:
        """The input channel state of the unaligned ``checkpoint_id``, once complete."""

    def suspend(self, checkpoint_id: int) -> None:
        """Deliver nothing more: the stop savepoint ``checkpoint_id`` is the job's last."""

    def resume(self, checkpoint_id: int) -> None:
        """Deliver again if ``checkpoint_id`` suspended this head (its savepoint failed)."""

    def end_input(self) -> None:
        """End the input now, as if it had been read out (stop-with-savepoint, drained)."""

    @property
    def reads_nothing(self) -> bool:
        """Whether no input can ever come (a source subtask without splits)."""

    @property
    def buffered(self) -> int:
        """Records waiting to be polled."""

    @property
    def capacity(self) -> int:
        """Records the head can hold waiting."""


class GateHead:
    """Reads the subtask's input channels through an ``InputGate``."""

    def __init__(self, gate: InputGate) -> None:
        self.gate = gate
        self.poll = gate.poll
        self.poll_priority = gate.poll_priority
        self.defer = gate.defer

    @property
    def alignment_deadline(self) -> float | None:
        """When the gate's pending alignment goes unaligned, if it will."""
        return self.gate.alignment_deadline

    def take_channel_state(self, checkpoint_id: int) -> ChannelRecords:
        """The records recorded for the unaligned ``checkpoint_id``."""
        return self.gate.in_flight.take(checkpoint_id)

    async def open(self, doorbell: Doorbell) -> None:
        """Nothing to open: the channels already ring the doorbell."""

    def start(self, group: TaskGroup) -> None:
        """Nothing runs in the background."""

    async def close(self) -> None:
        """Nothing to close: upstream subtasks close their channels."""

    def capture(self, checkpoint_id: int) -> StateCapture | None:
        """Nothing at the snapshot: input channel state is taken when it is complete."""
        return None

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Nothing to tell."""

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Nothing to tell."""

    def suspend(self, checkpoint_id: int) -> None:
        """Nothing to suspend: only sources are told to stop, and channels then run dry."""

    def resume(self, checkpoint_id: int) -> None:
        """Nothing to resume."""

    def end_input(self) -> None:
        """Channels end when their upstream subtasks end."""

    reads_nothing = False

    def alignment_started_at(self, checkpoint_id: int, *, default: float) -> float:
        """When the first barrier of ``checkpoint_id`` arrived, or ``default``."""
        started = self.gate.alignment_started_at
        for older in [cid for cid in started if cid < checkpoint_id]:
            del started[older]
        return started.pop(checkpoint_id, default)

    @property
    def buffered(self) -> int:
        """Records in the input channels."""
        return self.gate.buffered

    @property
    def capacity(self) -> int:
        """Records the input channels can hold."""
        return self.gate.capacity


class SourceHead:
    """Reads a source in a background fetch task that stays one batch ahead.

    The fetch task may wait inside ``read`` (an unbounded source with nothing new) while the
    subtask still answers control messages. Each fetched batch travels with the split
    positions just after it; ``splits`` is the position of the last batch polled, which is
    what a checkpoint of this subtask must record.
    """

    def __init__(
        self,
        reader: SourceReader[Any],
        splits: list[SourceSplit],
        *,
        batch_size: int,
        scope: OperatorScope,
    ) -> None:
        self.reader = reader
        self.splits = splits
        self._batch_size = batch_size
        self._scope = scope
        self._fetched: Mailbox[tuple[list[Any], list[SourceSplit]]] | None = None
        self._suspended_by: int | None = None
        self._ended = False

    async def open(self, doorbell: Doorbell) -> None:
        """Open the reader; fetched batches will ring ``doorbell``."""
        self._fetched = Mailbox(1, doorbell=doorbell, name=f"{self._scope.name}.fetched")
        with self._scope:
            await self.reader.open()

    def start(self, group: TaskGroup) -> None:
        """Start the fetch task."""
        group.start_soon(self._fetch)

    def poll(self) -> GateItem | None:
        """Return the next fetched batch, ``EndOfInput`` once read out, or ``None``."""
        assert self._fetched is not None, "poll() before open()"
        if self._ended:
            return EndOfInput()
        if self._suspended_by is not None:
            return None
        try:
            records, self.splits = self._fetched.receive_nowait()
        except MailboxEmpty:
            return None
        except EndOfMailbox:
            return EndOfInput()
        return records

    async def close(self) -> None:
        """Close the reader."""
        with self._scope:
            await self.reader.close()

    def alignment_started_at(self, checkpoint_id: int, *, default: float) -> float:
        """A source is triggered directly: no alignment."""
        return default

    alignment_deadline = None

    def poll_priority(self) -> list[GateItem]:
        """A source has no channels: nothing overtakes."""
        return []

    def defer(self, item: GateItem) -> None:
        """Nothing is ever handed back."""
        raise AssertionError(f"a source head polls no barriers; got {item!r} back")

    def take_channel_state(self, checkpoint_id: int) -> ChannelRecords:
        """A source reads no channels."""
        return {}

    def suspend(self, checkpoint_id: int) -> None:
        """Poll nothing more; the positions stay those of the last batch polled."""
        self._suspended_by = checkpoint_id

    def resume(self, checkpoint_id: int) -> None:
        """Poll again if the failed savepoint ``checkpoint_id`` suspended the source."""
        if self._suspended_by == checkpoint_id:
            self._suspended_by = None

    def end_input(self) -> None:
        """Deliver ``EndOfInput`` next: batches fetched but not polled are never delivered."""
        self._ended = True

    @property
    def reads_nothing(self) -> bool:
        """Whether this subtask was given no split: it will never read a record."""
        return not self.splits

    def capture(self, checkpoint_id: int) -> StateCapture:
        """The positions just after the last batch polled, under ``SPLITS_STATE``.

        The reader sees them first and may add to them (``SourceReader.checkpoint_splits``).
        """
        with self._scope:
            splits = self.reader.checkpoint_splits(checkpoint_id, list(self.splits))
        return StateCapture(self._scope.uid, lists={SPLITS_STATE: list(splits)})

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Tell the reader that ``checkpoint_id`` completed."""
        with self._scope:
            await self.reader.notify_checkpoint_complete(checkpoint_id)

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Tell the reader that ``checkpoint_id`` was aborted."""
        with self._scope:
            await self.reader.notify_checkpoint_aborted(checkpoint_id)

    @property
    def buffered(self) -> int:
        """Records fetched and not yet polled."""
        return 0 if self._fetched is None else self._fetched.statistics().size

    @property
    def capacity(self) -> int:
        """A source head has no input channels."""
        return 0

    async def _fetch(self) -> None:
        assert self._fetched is not None
        while True:
            with self._scope:
                records = await self.reader.read(self._batch_size)
                splits = self.reader.snapshot_splits()
            if not records:
                self._fetched.close()
                return
            await self._fetched.send((records, splits))
