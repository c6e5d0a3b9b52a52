"""OutputPartition and SidePartitions: the outgoing edges of an output gate, main and side."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from lockgate.actors import Channel
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.events import ChannelItem
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.runtime.network.partitioners import Partitioner

__all__ = ["OutputPartition", "SidePartitions"]


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


class SidePartitions:
    """The partitions of a gate that carry side outputs, grouped by their tags.

    ``route`` puts side records into the buffers of their tags' partitions and never waits;
    records of a tag nobody reads (no partition) are dropped, as Flink drops them.
    """

    __slots__ = ("_by_tag",)

    def __init__(self, partitions: Sequence[OutputPartition]) -> None:
        self._by_tag: dict[OutputTag[Any], list[OutputPartition]] = {}
        for partition in partitions:
            if partition.tag is not None:
                self._by_tag.setdefault(partition.tag, []).append(partition)

    def route(self, side: Mapping[OutputTag[Any], list[Any]]) -> tuple[list[OutputPartition], int]:
        """Route each tag's records; return the partitions routed to and the records routed."""
        routed: list[OutputPartition] = []
        count = 0
        for tag, records in side.items():
            partitions = self._by_tag.get(tag, ())
            for partition in partitions:
                partition.partitioner.route(records, partition.buffers)
            if partitions:
                routed += partitions
                count += len(records)
        return routed, count

    def __contains__(self, tag: object) -> bool:
        """Whether records of ``tag`` have partitions to go to (someone reads them)."""
        return tag in self._by_tag

    def __repr__(self) -> str:
        return f"<SidePartitions {sorted(tag.name for tag in self._by_tag)}>"
