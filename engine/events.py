"""In-band events: what travels on a data channel besides batches of records.

A channel carries ``list`` batches of records and these events, in one FIFO order. An event
is never reordered with the records around it: an output gate flushes its buffered records
before it sends one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

__all__ = [
    "CHECKPOINT",
    "CheckpointBarrier",
    "ChannelItem",
    "EndOfInput",
    "Event",
    "SnapshotKind",
    "SnapshotOptions",
    "Watermark",
    "WatermarkStatus",
    "item_size",
]


class SnapshotKind(enum.Enum):
    """What a snapshot is for: a checkpoint, or a savepoint (intermediate or the last one).

    An intermediate savepoint commits nothing (as in Flink 1.15+): transactions pre-committed
    at it are committed by the next checkpoint. A stop savepoint is the job's last snapshot:
    sinks commit everything up to it, and the job then stops.
    """

    CHECKPOINT = "checkpoint"
    SAVEPOINT = "savepoint"
    STOP_SAVEPOINT = "stop-with-savepoint"

    @property
    def is_savepoint(self) -> bool:
        """Whether the snapshot is written as a savepoint, in the canonical format."""
        return self is not SnapshotKind.CHECKPOINT

    @property
    def commits(self) -> bool:
        """Whether completing the snapshot commits the transactions pre-committed at it."""
        return self is not SnapshotKind.SAVEPOINT


@dataclass(frozen=True, slots=True)
class SnapshotOptions:
    """How to take one snapshot: its kind, a savepoint's folder, and how barriers align.

    An ``unaligned`` barrier overtakes the records queued before it, which the snapshot then
    stores as channel state (Flink's unaligned checkpoints). With ``aligned_timeout`` each
    subtask first aligns, and goes unaligned once its alignment has taken that many seconds;
    a barrier a subtask forwards unaligned no longer carries the timeout. Savepoints are
    always aligned.
    """

    kind: SnapshotKind = SnapshotKind.CHECKPOINT
    target: str | None = None
    unaligned: bool = False
    aligned_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.unaligned and self.kind.is_savepoint:
            raise ValueError(f"a {self.kind.value} is always aligned; it cannot be unaligned")
        if self.aligned_timeout is not None and not self.unaligned:
            raise ValueError(
                f"aligned_timeout={self.aligned_timeout} needs unaligned=True: it is how long a "
                "checkpoint stays aligned before it goes unaligned"
            )
        if self.aligned_timeout is not None and self.aligned_timeout < 0:
            raise ValueError(
                f"aligned_timeout must be 0 or more seconds; got {self.aligned_timeout}"
            )

    @property
    def overtakes(self) -> bool:
        """Whether the barrier is unaligned from the start: it overtakes in-flight records."""
        return self.unaligned and self.aligned_timeout is None

    def as_unaligned(self) -> SnapshotOptions:
        """These options for a barrier forwarded unaligned: without the aligned timeout."""
        return replace(self, aligned_timeout=None)


CHECKPOINT = SnapshotOptions()
"""The options of every periodic or triggered checkpoint."""


@dataclass(frozen=True, slots=True)
class CheckpointBarrier:
    """Marks the point in a channel's stream that belongs to checkpoint ``checkpoint_id``.

    Records before it on the channel are in the checkpoint's state, records after it not.
    ``options`` travel with it, so every subtask writes a savepoint where it is due.
    """

    checkpoint_id: int
    timestamp: float
    options: SnapshotOptions = CHECKPOINT


@dataclass(frozen=True, slots=True)
class Watermark:
    """No record with an event time at or below ``timestamp`` follows on this channel.

    Multi-input operators take the minimum over their inputs.
    """

    timestamp: float


@dataclass(frozen=True, slots=True)
class WatermarkStatus:
    """Whether this channel's watermarks count: an ``idle`` channel holds no one back.

    A source subtask that read nothing for its strategy's idleness timeout goes idle; it is
    active again with its next record. A subtask whose inputs are all idle is idle too.
    """

    idle: bool


@dataclass(frozen=True, slots=True)
class EndOfInput:
    """The upstream subtask has emitted its last record; nothing follows on this channel.

    A channel that ended counts as aligned for every later checkpoint.
    """


Event: TypeAlias = CheckpointBarrier | Watermark | WatermarkStatus | EndOfInput
ChannelItem: TypeAlias = list[Any] | Event


def item_size(item: ChannelItem) -> int:
    """Count what a channel item weighs against a channel's capacity: its records, or 1."""
    return len(item) if type(item) is list else 1
