"""Channel state: the in-flight records an unaligned checkpoint stores, by channel.

An unaligned barrier overtakes records. Those records were sent before the upstream
subtask's snapshot but reach the downstream subtask after its own, so neither operator
state holds them: the checkpoint stores them as channel state. The downstream subtask
stores what it read from a channel after its snapshot and before that channel's barrier
(input channel state); the upstream subtask stores what the barrier overtook in the
channel, and what it held back unsent (output channel state). On restore, a subtask first
processes its input channel state, then reads its channels, where its upstream has sent
its output channel state before anything new.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeAlias

__all__ = ["ChannelId", "ChannelRecords", "holds_records", "record_count"]


class ChannelId(NamedTuple):
    """One channel of a running job: an edge between two chains, and a subtask at each end.

    ``edge_id`` numbers the plan's edges between chains (the same job graph is always
    planned with the same numbers); the indexes are those of the upstream subtask that sends
    and the downstream subtask that receives.
    """

    edge_id: int
    upstream_index: int
    downstream_index: int

    def __str__(self) -> str:
        return f"edge {self.edge_id} [{self.upstream_index}->{self.downstream_index}]"


ChannelRecords: TypeAlias = dict[ChannelId, list[Any]]
"""In-flight records by channel, in the order they travel on it."""


def holds_records(channels: ChannelRecords) -> bool:
    """Whether any channel holds a record."""
    return any(channels.values())


def record_count(channels: ChannelRecords) -> int:
    """How many records the channels hold together."""
    return sum(len(records) for records in channels.values())
