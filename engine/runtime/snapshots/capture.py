"""StateCapture: a consistent copy of one operator's state, taken on the event loop at a barrier."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from lockgate.engine.checkpointing.channel_state import ChannelRecords
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.state import (
    KeyedSnapshot,
    KeyedStateSnapshot,
    OperatorStateSnapshot,
)

__all__ = ["StateCapture", "with_channel_state"]


@dataclass(frozen=True, slots=True)
class StateCapture:
    """A consistent copy of one operator's state, taken on the event loop at a barrier.

    ``materialize`` turns it into plain data off the event loop (in a worker thread), while
    the operator goes on changing its live state. The capture of a chain's head or tail may
    carry the in-flight records of an unaligned checkpoint (``input_channels``,
    ``output_channels``); nothing changes them once captured. ``held_records`` counts the
    records ``lists`` hold inside their items (a sink's pre-committed transactions).
    """

    uid: str
    keyed: KeyedSnapshot | None = None
    operator: OperatorStateSnapshot | None = None
    lists: dict[str, list[Any]] = field(default_factory=dict)
    input_channels: ChannelRecords = field(default_factory=dict)
    output_channels: ChannelRecords = field(default_factory=dict)
    held_records: int = 0

    @property
    def entries(self) -> int:
        """How many keyed entries and held records the capture holds (its cost to encode)."""
        keyed = 0 if self.keyed is None else self.keyed.entries
        return keyed + self.held_records

    def materialize(
        self, max_parallelism: int, base: KeyedStateSnapshot | None = None
    ) -> OperatorSnapshot:
        """Group keyed state by key group and merge everything into an ``OperatorSnapshot``.

        With ``base`` (the heap snapshot of this operator's last completed checkpoint) the
        result is incremental: only the keyed entries changed since, and the keys deleted.
        """
        keyed: dict[int, dict[str, dict[Any, Any]]] = {}
        deleted: dict[int, dict[str, list[Any]]] = {}
        if base is not None:
            assert isinstance(self.keyed, KeyedStateSnapshot), "deltas need a heap snapshot"
            keyed, deleted = self.keyed.delta_by_key_group(base, max_parallelism)
        elif self.keyed is not None:
            keyed = self.keyed.by_key_group(max_parallelism)
        state = self.operator
        return OperatorSnapshot(
            self.uid,
            keyed=keyed,
            lists={**(state.lists if state else {}), **self.lists},
            unions=dict(state.unions) if state else {},
            broadcast=dict(state.broadcast) if state else {},
            kinds={} if self.keyed is None else dict(self.keyed.kinds),
            deleted=deleted,
            is_delta=base is not None,
            input_channels=self.input_channels,
            output_channels=self.output_channels,
        )


def with_channel_state(
    captures: list[StateCapture],
    uid: str,
    *,
    inputs: ChannelRecords | None = None,
    outputs: ChannelRecords | None = None,
) -> list[StateCapture]:
    """Return ``captures`` with channel state added to the capture of ``uid`` (or a new one).

    Channels without records add nothing.
    """
    inputs = {key: records for key, records in (inputs or {}).items() if records}
    outputs = {key: records for key, records in (outputs or {}).items() if records}
    if not inputs and not outputs:
        return captures
    position = next((i for i, c in enumerate(captures) if c.uid == uid), len(captures))
    found = captures[position] if position < len(captures) else StateCapture(uid)
    merged = replace(
        found,
        input_channels={**found.input_channels, **inputs},
        output_channels={**found.output_channels, **outputs},
    )
    return [*captures[:position], merged, *captures[position + 1 :]]
