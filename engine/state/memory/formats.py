"""How the memory backend stores each kind of state: containers and values with a TTL ☐."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lockgate.engine.state.descriptors import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)
from lockgate.engine.state.memory.aggregating_state import HeapAggregatingState
from lockgate.engine.state.memory.list_state import HeapListState
from lockgate.engine.state.memory.map_state import HeapMapState
from lockgate.engine.state.memory.ttl_container_state import (
    export_aggregate,
    export_list,
    restore_container,
)
from lockgate.engine.state.memory.ttl_map_state import export_map, restore_map
from lockgate.engine.state.memory.ttl_value_state import export_value, restore_value

__all__ = ["to_plain_of", "ttl_format_of"]

# States whose tables hold StateEntry containers, and how a snapshot makes them plain.
_CONTAINERS: tuple[tuple[type[StateDescriptor], Callable[[Any], Any]], ...] = (
    (ListStateDescriptor, HeapListState.to_plain),
    (MapStateDescriptor, HeapMapState.to_plain),
    (AggregatingStateDescriptor, HeapAggregatingState.to_plain),
)

# How states with a TTL store values: the snapshot export, and the wrapping of restored ones.
_TTL_FORMATS: tuple[
    tuple[type[StateDescriptor], Callable[[Any, float], Any], Callable[[Any, float], Any]], ...
] = (
    (ValueStateDescriptor, export_value, restore_value),
    (ReducingStateDescriptor, export_value, restore_value),
    (ListStateDescriptor, export_list, restore_container),
    (AggregatingStateDescriptor, export_aggregate, restore_container),
    (MapStateDescriptor, export_map, restore_map),
)


def to_plain_of(descriptor: StateDescriptor) -> Callable[[Any], Any] | None:
    """How a snapshot makes the containers of ``descriptor``'s table plain; ``None``: values."""
    for kind, to_plain in _CONTAINERS:
        if isinstance(descriptor, kind):
            return to_plain
    return None


def ttl_format_of(
    descriptor: StateDescriptor,
) -> tuple[Callable[[Any, float], Any], Callable[[Any, float], Any]]:
    """The export and restore of stored values of ``descriptor``, a state with a TTL.

    Raises:
        TypeError: ``descriptor`` is not a keyed state descriptor.
    """
    for kind, export, restorer in _TTL_FORMATS:
        if isinstance(descriptor, kind):
            return export, restorer
    raise TypeError(f"state '{descriptor.name}' needs a keyed state descriptor to have a TTL")
