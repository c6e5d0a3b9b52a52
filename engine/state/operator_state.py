"""OperatorStateStore: the non-keyed state of one operator subtask, and its snapshot."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

from lockgate.engine.state.descriptors import (
    ListStateDescriptor,
    MapStateDescriptor,
    StateDescriptor,
)
from lockgate.engine.state.handles import ListState, MapState
from lockgate.engine.state.memory.entry import StateEntry
from lockgate.engine.state.memory.list_state import HeapListState
from lockgate.engine.state.memory.map_state import HeapMapState
from lockgate.engine.state.memory.versioned_table import VersionedTable

__all__ = ["OperatorStateSnapshot", "OperatorStateStore"]

V = TypeVar("V")
K = TypeVar("K")

_NOTHING: Mapping[str, Any] = MappingProxyType({})


class _Mode(enum.Enum):
    """How a state is redistributed when a job restores at another parallelism."""

    LIST = "list"  # split evenly over the new subtasks
    UNION = "union list"  # every new subtask gets the concatenation of all
    BROADCAST = "broadcast"  # the same map in every subtask


@dataclass(frozen=True, slots=True)
class OperatorStateSnapshot:
    """Copies of one subtask's operator state: nothing the running operator does changes them.

    Attributes:
        lists: even-split list states, name -> items.
        unions: union list states, name -> items.
        broadcast: broadcast states, name -> key -> value.
    """

    lists: dict[str, list[Any]]
    unions: dict[str, list[Any]]
    broadcast: dict[str, dict[Any, Any]]


class OperatorStateStore:
    """List, union list and broadcast state of one subtask, not scoped to any key.

    Each name has one mode (list, union list or broadcast), fixed by its first declaration
    or its restore. ``snapshot`` copies every list and map, so it is consistent; states that
    were restored but never declared are kept and snapshotted again, as Flink does. The
    handles are the keyed ``ListState`` and ``MapState`` over one fixed key, ``None``.
    """

    __slots__ = ("_declared", "_modes", "_tables")

    def __init__(self) -> None:
        self._tables: dict[str, VersionedTable] = {}  # never frozen: snapshots copy
        self._modes: dict[str, _Mode] = {}
        self._declared: dict[str, StateDescriptor] = {}

    @property
    def current_key(self) -> None:
        """Operator state has a single scope: the fixed key ``None``."""
        return None

    @property
    def epoch(self) -> int:
        """Always 0: snapshots and restores copy, so no container is ever shared."""
        return 0

    def get_list_state(self, descriptor: ListStateDescriptor[V]) -> ListState[V]:
        """Return the list state that is split evenly over the subtasks on rescaling."""
        return HeapListState(self, self._table(descriptor, _Mode.LIST))

    def get_union_list_state(self, descriptor: ListStateDescriptor[V]) -> ListState[V]:
        """Return the list state that every subtask receives in full (the union) on restore."""
        return HeapListState(self, self._table(descriptor, _Mode.UNION))

    def get_broadcast_state(self, descriptor: MapStateDescriptor[K, V]) -> MapState[K, V]:
        """Return the broadcast state: a map that is the same on every subtask."""
        return HeapMapState(self, self._table(descriptor, _Mode.BROADCAST))

    def snapshot(self) -> OperatorStateSnapshot:
        """Return copies of every state, declared or restored (empty ones included)."""
        lists = {name: self._list(name) for name in self._names(_Mode.LIST)}
        unions = {name: self._list(name) for name in self._names(_Mode.UNION)}
        broadcast = {name: self._map(name) for name in self._names(_Mode.BROADCAST)}
        return OperatorStateSnapshot(lists, unions, broadcast)

    def restore(
        self,
        lists: Mapping[str, Iterable[Any]] = _NOTHING,
        unions: Mapping[str, Iterable[Any]] = _NOTHING,
        broadcast: Mapping[str, Mapping[Any, Any]] = _NOTHING,
    ) -> None:
        """Load copies of the states this subtask was given, declared or not.

        Raises:
            ValueError: a name is given in two modes, or was declared in another mode.
        """
        for mode, states in ((_Mode.LIST, lists), (_Mode.UNION, unions)):
            for name, items in states.items():
                self._load(name, mode, list(items))
        for name, entries in broadcast.items():
            self._load(name, _Mode.BROADCAST, dict(entries))

    def note_copy(self) -> None:
        """Never called: no container of operator state is shared with a snapshot."""

    def _table(self, descriptor: StateDescriptor, mode: _Mode) -> VersionedTable:
        if descriptor.ttl is not None:
            raise ValueError(
                f"operator state '{descriptor.name}' has a TTL, but only keyed state can "
                "expire (as in Flink); drop ttl= from its descriptor, or keep it as keyed state"
            )
        self._check_mode(descriptor.name, mode)
        known = self._declared.setdefault(descriptor.name, descriptor)
        if known != descriptor:
            raise ValueError(
                f"operator state '{descriptor.name}' was declared twice, differently: {known} "
                f"and {descriptor}; give each state its own name"
            )
        self._modes[descriptor.name] = mode
        return self._table_named(descriptor.name)

    def _check_mode(self, name: str, mode: _Mode) -> None:
        known = self._modes.get(name)
        if known is not None and known is not mode:
            raise ValueError(
                f"operator state '{name}' is {known.value} state; it cannot also be "
                f"{mode.value} state; give each state its own name"
            )

    def _load(self, name: str, mode: _Mode, value: Any) -> None:
        self._check_mode(name, mode)
        self._modes[name] = mode
        table = self._table_named(name)
        if value:
            table[None] = StateEntry(self.epoch, value)
        else:
            table.discard(None)

    def _table_named(self, name: str) -> VersionedTable:
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = VersionedTable()
        return table

    def _names(self, mode: _Mode) -> list[str]:
        return [name for name, known in self._modes.items() if known is mode]

    def _list(self, name: str) -> list[Any]:
        entry = self._tables[name].get(None)
        return [] if entry is None else list(entry.value)

    def _map(self, name: str) -> dict[Any, Any]:
        entry = self._tables[name].get(None)
        return {} if entry is None else dict(entry.value)

    def __repr__(self) -> str:
        modes = ", ".join(f"{name}={mode.value}" for name, mode in self._modes.items())
        return f"<OperatorStateStore {modes or 'empty'}>"
