"""Checkpoint barrier alignment: which input channels a subtask reads, and when it snapshots.

The pure core of Flink's ``CheckpointBarrierHandler``. A subtask's input gate hands every
barrier and every end of input to a ``BarrierAligner``, stops reading the channels it
reports blocked, records the records of the channels it reports recording, and carries out
the decisions it returns: snapshot (then forward the barrier), snapshot unaligned (forward
the barrier ahead of the queued records), finish the channel state of an unaligned
snapshot, or decline a checkpoint with ``CheckpointFailureReason.ALIGNMENT_ABORTED``.
It has no event loop and no clock: the gate passes the time in, and the subtask measures
alignment time around the calls.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TypeAlias

from lockgate.engine.errors import BarrierProtocolError
from lockgate.engine.events import CheckpointBarrier

__all__ = [
    "AbortCheckpoint",
    "AlignerStatistics",
    "AlignmentMode",
    "BarrierAligner",
    "ChannelStateComplete",
    "Decision",
    "TriggerSnapshot",
    "TriggerUnalignedSnapshot",
]


class AlignmentMode(enum.Enum):
    """Whether a channel that delivered a barrier waits for the others.

    In ``ALIGNED`` mode a barrier's options may ask for an unaligned checkpoint, at once or
    after an aligned timeout; ``AT_LEAST_ONCE`` ignores that (it never blocks anyway).
    """

    ALIGNED = "aligned"
    """Exactly-once: a channel is blocked from its barrier until every live channel has it,
    unless the checkpoint goes unaligned."""

    AT_LEAST_ONCE = "at_least_once"
    """No channel is ever blocked; records behind a barrier may enter the snapshot's epoch."""


@dataclass(frozen=True, slots=True)
class TriggerSnapshot:
    """Every live channel delivered ``barrier``: snapshot now, then forward the barrier."""

    barrier: CheckpointBarrier


@dataclass(frozen=True, slots=True)
class TriggerUnalignedSnapshot:
    """Snapshot now and forward ``barrier`` ahead of the records queued on every output.

    From now until ``ChannelStateComplete``, every record read from a recording channel is
    processed and also kept as the checkpoint's input channel state.
    """

    barrier: CheckpointBarrier


@dataclass(frozen=True, slots=True)
class ChannelStateComplete:
    """Every live channel delivered the barrier of the unaligned ``checkpoint_id``.

    Its input channel state is complete: the snapshot can be written and acknowledged.
    """

    checkpoint_id: int


@dataclass(frozen=True, slots=True)
class AbortCheckpoint:
    """This subtask abandons ``checkpoint_id``: decline it with ``ALIGNMENT_ABORTED``."""

    checkpoint_id: int


Decision: TypeAlias = (
    TriggerSnapshot | TriggerUnalignedSnapshot | ChannelStateComplete | AbortCheckpoint
)


@dataclass(frozen=True, slots=True)
class AlignerStatistics:
    """A snapshot of an aligner's state.

    ``blocked_channels`` is always empty in ``AT_LEAST_ONCE`` mode and is a subset of
    ``live_channels``; so is ``recording_channels``, and at most one of the two is non-empty.
    ``pending_checkpoint`` is ``None``, greater than ``last_triggered``, or equal to it while
    the channel state of its unaligned snapshot is being recorded.
    """

    mode: AlignmentMode
    pending_checkpoint: int | None
    blocked_channels: frozenset[int]
    live_channels: frozenset[int]
    last_triggered: int
    aborted_count: int
    recording_channels: frozenset[int] = frozenset()
    alignment_deadline: float | None = None


class BarrierAligner:
    """Aligns the checkpoint barriers of a subtask's input channels.

    At most one checkpoint is pending at a time, and its id is at least every id triggered
    so far; ids are triggered in increasing order. An aligned checkpoint ``n`` triggers
    (``TriggerSnapshot(n)``) exactly when every live channel (one that has not ended) has
    delivered barrier ``n``. In ``ALIGNED`` mode the channels that delivered the pending
    barrier are blocked, so no record behind barrier ``n`` is processed before snapshot
    ``n``; that is the exactly-once guarantee. A channel that ended counts as aligned for
    the pending and every later checkpoint, and is never blocked.

    A checkpoint whose barrier options ask for it goes unaligned (``TriggerUnalignedSnapshot``)
    at its first barrier, at the first barrier that arrives unaligned, or once its alignment
    has lasted ``aligned_timeout`` seconds (times as the caller passes them). From then on no
    channel is blocked, and the channels that have not delivered its barrier are recording:
    what they deliver before it is the checkpoint's input channel state, complete
    (``ChannelStateComplete``) when every live channel has delivered the barrier.
    """

    def __init__(self, channel_count: int, *, mode: AlignmentMode) -> None:
        if channel_count < 1:
            raise ValueError(f"a barrier aligner needs at least one channel; got {channel_count}")
        self._channel_count = channel_count
        self._mode = mode
        self._live = set(range(channel_count))
        self._pending: CheckpointBarrier | None = None
        self._started_at = 0.0
        self._unaligned = False
        self._delivered: set[int] = set()
        self._last_triggered = 0
        self._aborted_count = 0

    def on_barrier(
        self, channel: int, barrier: CheckpointBarrier, *, now: float = 0.0
    ) -> list[Decision]:
        """Take the barrier ``channel`` delivered at time ``now``; say what the subtask must do.

        Situations, by the barrier's checkpoint id ``n``:

        - ``n`` is already triggered or older than the pending checkpoint: stale, ignored.
        - ``n`` is the pending checkpoint: the channel has delivered it (and is blocked, or
          stops recording if the checkpoint went unaligned).
        - ``n`` is newer than the pending checkpoint: the pending one is aborted, and the
          alignment of ``n`` starts with this channel.

        Returns:
            ``AbortCheckpoint`` for an abandoned checkpoint, then ``TriggerUnalignedSnapshot``
            if checkpoint ``n`` goes unaligned now, then ``TriggerSnapshot`` or
            ``ChannelStateComplete`` if barrier ``n`` has now arrived on every live channel;
            or nothing.

        Raises:
            BarrierProtocolError: the channel ended, does not exist, or already delivered
                barrier ``n``.
        """
        checkpoint_id = barrier.checkpoint_id
        self._check_live(channel, f"the barrier of checkpoint {checkpoint_id}")
        if self._is_stale(checkpoint_id):
            return []
        self._check_first_delivery(channel, checkpoint_id)
        decisions = self._abort_older_than(checkpoint_id)
        if self._pending is None:
            self._pending, self._started_at = barrier, now
        self._delivered.add(channel)
        if barrier.options.overtakes or self._timed_out(now):
            decisions += self._go_unaligned()
        return decisions + self._complete_if_aligned()

    def on_end_of_input(self, channel: int) -> list[Decision]:
        """Take the end of ``channel``: it counts as aligned from now on.

        Returns:
            ``TriggerSnapshot`` or ``ChannelStateComplete`` if the end completes the pending
            checkpoint; or nothing.

        Raises:
            BarrierProtocolError: the channel already ended or does not exist.
        """
        self._check_live(channel, "EndOfInput")
        self._live.discard(channel)
        self._delivered.discard(channel)
        return self._complete_if_aligned()

    def on_time(self, now: float) -> list[Decision]:
        """Switch the pending checkpoint to unaligned if its ``alignment_deadline`` passed.

        Returns:
            ``TriggerUnalignedSnapshot`` if the checkpoint goes unaligned now; or nothing.
        """
        return self._go_unaligned() if self._timed_out(now) else []

    def is_blocked(self, channel: int) -> bool:
        """Tell whether the gate must stop reading ``channel`` for now."""
        self._check_exists(channel)
        return channel in self.blocked_channels

    @property
    def blocked_channels(self) -> frozenset[int]:
        """The channels the gate must not read until the pending checkpoint triggers."""
        if self._mode is AlignmentMode.AT_LEAST_ONCE or self._unaligned:
            return frozenset()
        return frozenset(self._delivered)

    @property
    def recording_channels(self) -> frozenset[int]:
        """The channels whose records are in-flight state of the pending unaligned checkpoint."""
        if not self._unaligned:
            return frozenset()
        return frozenset(self._live - self._delivered)

    @property
    def alignment_deadline(self) -> float | None:
        """When the pending aligned checkpoint goes unaligned, if its options say it does."""
        pending = self._pending
        if pending is None or self._unaligned or self._mode is not AlignmentMode.ALIGNED:
            return None
        timeout = pending.options.aligned_timeout
        return None if timeout is None else self._started_at + timeout

    @property
    def pending_checkpoint(self) -> int | None:
        """The id of the checkpoint being aligned, or ``None`` between alignments."""
        return None if self._pending is None else self._pending.checkpoint_id

    @property
    def last_triggered(self) -> int:
        """The newest checkpoint id triggered so far; 0 before the first."""
        return self._last_triggered

    def statistics(self) -> AlignerStatistics:
        """Return the mode, the alignment in progress and the counters."""
        return AlignerStatistics(
            mode=self._mode,
            pending_checkpoint=self.pending_checkpoint,
            blocked_channels=self.blocked_channels,
            live_channels=frozenset(self._live),
            last_triggered=self._last_triggered,
            aborted_count=self._aborted_count,
            recording_channels=self.recording_channels,
            alignment_deadline=self.alignment_deadline,
        )

    def __repr__(self) -> str:
        unaligned = " unaligned" if self._unaligned else ""
        return (
            f"<BarrierAligner {self._mode.value} pending={self.pending_checkpoint}{unaligned}"
            f" delivered={sorted(self._delivered)} blocked={sorted(self.blocked_channels)}"
            f" live={sorted(self._live)}/{self._channel_count}"
            f" last_triggered={self._last_triggered}>"
        )

    def _is_stale(self, checkpoint_id: int) -> bool:
        pending = self.pending_checkpoint
        if pending is not None:
            return checkpoint_id < pending
        return checkpoint_id <= self._last_triggered

    def _timed_out(self, now: float) -> bool:
        deadline = self.alignment_deadline
        return deadline is not None and now >= deadline

    def _go_unaligned(self) -> list[Decision]:
        barrier = self._pending
        if barrier is None or self._unaligned or self._mode is not AlignmentMode.ALIGNED:
            return []
        self._unaligned = True
        self._last_triggered = barrier.checkpoint_id
        unaligned = CheckpointBarrier(
            barrier.checkpoint_id, barrier.timestamp, barrier.options.as_unaligned()
        )
        return [TriggerUnalignedSnapshot(unaligned)]

    def _abort_older_than(self, checkpoint_id: int) -> list[Decision]:
        if self._pending is None or self._pending.checkpoint_id == checkpoint_id:
            return []
        aborted = self._pending.checkpoint_id
        self._reset()
        self._aborted_count += 1
        return [AbortCheckpoint(aborted)]

    def _complete_if_aligned(self) -> list[Decision]:
        barrier = self._pending
        if barrier is None or not self._live <= self._delivered:
            return []
        unaligned = self._unaligned
        self._last_triggered = barrier.checkpoint_id
        self._reset()
        if unaligned:
            return [ChannelStateComplete(barrier.checkpoint_id)]
        return [TriggerSnapshot(barrier)]

    def _reset(self) -> None:
        self._pending = None
        self._unaligned = False
        self._delivered.clear()

    def _check_exists(self, channel: int) -> None:
        if not 0 <= channel < self._channel_count:
            raise BarrierProtocolError(
                f"channel {channel} does not exist; this aligner has channels 0 to"
                f" {self._channel_count - 1}"
            )

    def _check_live(self, channel: int, what: str) -> None:
        self._check_exists(channel)
        if channel not in self._live:
            raise BarrierProtocolError(
                f"channel {channel} delivered {what} after its EndOfInput;"
                " nothing may follow the end of a channel"
            )

    def _check_first_delivery(self, channel: int, checkpoint_id: int) -> None:
        if checkpoint_id == self.pending_checkpoint and channel in self._delivered:
            raise BarrierProtocolError(
                f"channel {channel} delivered the barrier of checkpoint {checkpoint_id} twice;"
                " a channel carries one barrier per checkpoint, and the gate must not read"
                " a blocked channel"
            )
