"""Heads: where a subtask's records come from — its input channels, or a source reader."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeAlias

from anyio.abc import TaskGroup

from lockgate.actors import Doorbell, EndOfMailbox, Mailbox, MailboxEmpty
from lockgate.engine.checkpointing.channel_state import ChannelRecords
from lockgate.engine.checkpointing.snapshots import SPLITS_STATE
from lockgate.engine.events import EndOfInput
from lockgate.engine.io.sources import SourceReader, SourceSplit, SplitRecords
from lockgate.engine.runtime.network.input_gate import GateItem, InputGate
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.runtime.snapshots.capture import StateCapture
from lockgate.engine.runtime.subtask.source_alignment import SourceAlignment
from lockgate.engine.time.timestamps_and_watermarks import SplitRun

__all__ = ["READ_AHEAD", "GateHead", "Head", "SourceHead"]

READ_AHEAD = 2
"""Batches a source subtask's fetch task holds read ahead of what the subtask polled.

The fetch task runs only while the subtask waits: with room for several batches, one wait
lets it read several, and the subtask then runs through them without waiting again (with
room for one, it waited once per batch). Two, as Flink's source readers queue two fetches:
each one more is a batch more of records read and waiting while the job is backpressured.
An aligned source reads one batch ahead, so that it stops reading as soon as its group
says it runs ahead.
"""

_Fetched: TypeAlias = tuple[
    list[Any], list[SourceSplit], tuple[SplitRun, ...] | None, frozenset[str] | None
]
"""A fetched batch, the positions after it, and (read by split) its runs and idle splits."""


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
    def watermark_alignment_drift(self) -> float | None:
        """How far an aligned source is above its group's watermark; else ``None``."""

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
    watermark_alignment_drift = None

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
    """Reads a source in a background fetch task that stays up to ``READ_AHEAD`` batches ahead.

    The fetch task may wait inside ``read`` (an unbounded source with nothing new) while the
    subtask still answers control messages. Each fetched batch travels with the split
    positions just after it; ``splits`` is the position of the last batch polled, which is
    what a checkpoint of this subtask must record. Read by split (``read_by_split``, for
    per-split watermarks), a batch also travels with the split of each of its records
    (``split_runs``) and the splits the reader said were idle once it read it
    (``reader_idle``). Aligned with other sources (``align_with``), the fetch task waits
    before each read while the subtask runs ahead of its group.
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
        self._fetched: Mailbox[_Fetched] | None = None
        self._suspended_by: int | None = None
        self._ended = False
        self._by_split = False
        self.split_runs: tuple[SplitRun, ...] | None = None
        self.reader_idle: frozenset[str] | None = None
        self.alignment: SourceAlignment | None = None

    def read_by_split(self) -> None:
        """Read with ``read_splits``, keeping the split of each record (before ``start``)."""
        self._by_split = True

    def align_with(self, alignment: SourceAlignment) -> None:
        """Pause reading while ``alignment`` says the subtask runs ahead (before ``start``)."""
        self.alignment = alignment

    async def open(self, doorbell: Doorbell) -> None:
        """Open the reader; fetched batches will ring ``doorbell``."""
        ahead = 1 if self.alignment is not None else READ_AHEAD
        self._fetched = Mailbox(ahead, doorbell=doorbell, name=f"{self._scope.name}.fetched")
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
            records, self.splits, self.split_runs, self.reader_idle = self._fetched.receive_nowait()
        except MailboxEmpty:
            return None
        except EndOfMailbox:
            return EndOfInput()
        return records

    async def close(self) -> None:
        """Close the reader; leave the alignment group."""
        if self.alignment is not None:
            self.alignment.leave()
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
    def watermark_alignment_drift(self) -> float | None:
        """How far this subtask's watermark is above its alignment group's, if aligned."""
        return None if self.alignment is None else self.alignment.drift

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
        read = self._read_by_split if self._by_split else self._read
        while True:
            if self.alignment is not None:
                await self.alignment.wait_until_allowed()
            with self._scope:
                fetched = await read()
            if fetched is None:
                if self.alignment is not None:
                    self.alignment.leave()
                self._fetched.close()
                return
            await self._fetched.send(fetched)

    async def _read(self) -> _Fetched | None:
        records = await self.reader.read(self._batch_size)
        return (records, self.reader.snapshot_splits(), None, None) if records else None

    async def _read_by_split(self) -> _Fetched | None:
        runs = await self.reader.read_splits(self._batch_size)
        if not runs:
            return None
        idle = frozenset(self.reader.idle_splits())
        return _joined(runs), self.reader.snapshot_splits(), _split_runs(runs), idle


def _joined(runs: Sequence[SplitRecords[Any]]) -> list[Any]:
    if len(runs) == 1:
        records = runs[0].records
        return records if type(records) is list else list(records)
    return [record for run in runs for record in run.records]


def _split_runs(runs: Sequence[SplitRecords[Any]]) -> tuple[SplitRun, ...]:
    return tuple(SplitRun(run.split_id, len(run.records), run.finished) for run in runs)
