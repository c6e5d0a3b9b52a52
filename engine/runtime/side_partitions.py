"""SidePartitions: an output gate's partitions for side outputs, found by tag."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lockgate.engine.functions.side_outputs import OutputTag

if TYPE_CHECKING:
    from lockgate.engine.runtime.output_gate import OutputPartition

__all__ = ["SidePartitions"]


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

    def __repr__(self) -> str:
        return f"<SidePartitions {sorted(tag.name for tag in self._by_tag)}>"
