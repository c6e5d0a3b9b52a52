"""Input gates: how a subtask reads its input channels, with barriers and watermarks."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any, TypeAlias

from lockgate.actors import Channel, MailboxEmpty
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.events import (
    ChannelItem,
    CheckpointBarrier,
    EndOfInput,
    Watermark,
    WatermarkStatus,
)
from lockgate.engine.runtime.network.barrier_aligner import (
    AbortCheckpoint,
    BarrierAligner,
    ChannelStateComplete,
    Decision,
    TriggerUnalignedSnapshot,
)
from lockgate.engine.runtime.network.input_channel_state import InputChannelState
from lockgate.engine.time.clock import Clock
from lockgate.engine.time.watermarks import WatermarkValve

__all__ = ["GateItem", "InputGate"]

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
