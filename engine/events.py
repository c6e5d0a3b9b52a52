"""In-band events: what travels on a data channel besides batches of records.

A channel carries ``list`` batches of records and these events, in one FIFO order. An event
is never reordered with the records around it: an output gate flushes its buffered records
before it sends one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = ["CheckpointBarrier", "ChannelItem", "EndOfInput", "Event", "Watermark", "item_size"]


@dataclass(frozen=True, slots=True)
class CheckpointBarrier:
    """Marks the point in a channel's stream that belongs to checkpoint ``checkpoint_id``.

    Records before it on the channel are in the checkpoint's state, records after it not.
    """

    checkpoint_id: int
    timestamp: float


@dataclass(frozen=True, slots=True)
class Watermark:
    """No record with an event time at or below ``timestamp`` follows on this channel.

    Multi-input operators take the minimum over their inputs.
    """

    timestamp: float


@dataclass(frozen=True, slots=True)
class EndOfInput:
    """The upstream subtask has emitted its last record; nothing follows on this channel.

    A channel that ended counts as aligned for every later checkpoint.
    """


Event: TypeAlias = CheckpointBarrier | Watermark | EndOfInput
ChannelItem: TypeAlias = list[Any] | Event


def item_size(item: ChannelItem) -> int:
    """Count what a channel item weighs against a channel's capacity: its records, or 1."""
    return len(item) if type(item) is list else 1
