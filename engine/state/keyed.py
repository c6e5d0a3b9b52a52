"""KeyedStateStore: the keyed state of one operator subtask, scoped to the current key."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from lockgate.engine.state.aggregating_state import AggregatingState
from lockgate.engine.state.descriptors import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)
from lockgate.engine.state.entry import FROZEN, StateEntry
from lockgate.engine.state.keyed_snapshot import KeyedStateSnapshot
from lockgate.engine.state.list_state import ListState
from lockgate.engine.state.map_state import MapState
from lockgate.engine.state.reducing_state import ReducingState
from lockgate.engine.state.value_state import ValueState

__all__ = ["KeyedStateStatistics", "KeyedStateStore"]

V = TypeVar("V")
UK = TypeVar("UK")
UV = TypeVar("UV")
IN = TypeVar("IN")
ACC = TypeVar("ACC")
OUT = TypeVar("OUT")

_KEYED = (
    ValueStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    AggregatingStateDescriptor,
)

# States whose tables hold StateEntry containers, and how a snapshot makes them plain.
_CONTAINERS: tuple[tuple[type[StateDescriptor], Callable[[Any], Any]], ...] = (
    (ListStateDescriptor, ListState.to_plain),
    (MapStateDescriptor, MapState.to_plain),
    (AggregatingStateDescriptor, AggregatingState.to_plain),
)


@dataclass(frozen=True, slots=True)
class KeyedStateStatistics:
    """A point-in-time view of one ``KeyedStateStore``.

    Attributes:
        states: tables held, declared or restored.
        entries: (state, key) pairs that hold a value.
        snapshots: snapshots taken; also the store's current epoch.
        copies_on_write: containers copied because a snapshot could still see them.
    """

    states: int
    entries: int
    snapshots: int
    copies_on_write: int


class KeyedStateStore:
    """The keyed state of one operator subtask: a table per state name, keyed by key.

    Reads and writes go to the ``current_key``, which the operator sets before it calls the
    user function for a record. Keys are stored as they are; their key groups are computed
    only when a snapshot is split (``KeyedStateSnapshot.by_key_group``), never per record.

    Invariant: ``snapshot`` is consistent and cheap (a shallow copy per table), because no
    write changes anything a snapshot references: values are replaced wholesale (so users
    must not change a value in place after storing it, as with Flink's heap backend), and
    list, map and aggregating containers are copied on their first write after a snapshot.
    Tables hold no empty entries: a cleared or emptied key is removed.
    """

    __slots__ = ("_copies", "_declared", "_plain", "current_key", "epoch", "tables")

    def __init__(self) -> None:
        self.tables: dict[str, dict[Any, Any]] = {}
        self.current_key: Any = None
        self.epoch = 0
        self._declared: dict[str, StateDescriptor] = {}
        self._plain: dict[str, Callable[[Any], Any]] = {}
        self._copies = 0

    def table(self, descriptor: StateDescriptor) -> dict[Any, Any]:
        """Return the raw table behind ``descriptor``, declaring it on first use.

        A table restored before its declaration is found by name. Writers of a raw table
        must replace values wholesale; list, map and aggregating tables hold ``StateEntry``
        wrappers and are meant for their state handles only.

        Raises:
            ValueError: ``descriptor.name`` was declared before with another descriptor.
        """
        known = self._declared.get(descriptor.name)
        if known is None:
            return self._declare(descriptor)
        if known != descriptor:
            raise ValueError(
                f"state '{descriptor.name}' was declared twice, differently: {known} and "
                f"{descriptor}; give each state its own name"
            )
        return self.tables[descriptor.name]

    def value_state(self, descriptor: ValueStateDescriptor[V]) -> ValueState[V]:
        """Return the ``ValueState`` declared by ``descriptor``."""
        return ValueState(self, self.table(descriptor), descriptor.default)

    @overload
    def get_state(self, descriptor: ValueStateDescriptor[V]) -> ValueState[V]: ...
    @overload
    def get_state(self, descriptor: ListStateDescriptor[V]) -> ListState[V]: ...
    @overload
    def get_state(self, descriptor: MapStateDescriptor[UK, UV]) -> MapState[UK, UV]: ...
    @overload
    def get_state(self, descriptor: ReducingStateDescriptor[V]) -> ReducingState[V]: ...
    @overload
    def get_state(
        self, descriptor: AggregatingStateDescriptor[IN, ACC, OUT]
    ) -> AggregatingState[IN, OUT]: ...
    def get_state(self, descriptor: StateDescriptor) -> Any:
        """Return a handle on the state ``descriptor`` declares, scoped to ``current_key``.

        Handles are cheap to use per record; create them once, in ``open``.

        Raises:
            ValueError: the name was declared before with another descriptor.
            TypeError: ``descriptor`` is not one of the five keyed state descriptors.
        """
        if not isinstance(descriptor, _KEYED):
            raise TypeError(
                f"state '{descriptor.name}' needs a keyed state descriptor; got {descriptor}"
            )
        table = self.table(descriptor)
        match descriptor:
            case ValueStateDescriptor():
                return ValueState(self, table, descriptor.default)
            case ListStateDescriptor():
                return ListState(self, table)
            case MapStateDescriptor():
                return MapState(self, table)
            case ReducingStateDescriptor():
                return ReducingState(self, table, descriptor.reduce_function)
            case _:
                assert isinstance(descriptor, AggregatingStateDescriptor)
                return AggregatingState(self, table, descriptor.aggregate_function)

    def key_count(self) -> int:
        """How many distinct keys hold state in any table."""
        keys: set[Any] = set()
        for table in self.tables.values():
            keys.update(table)
        return len(keys)

    def snapshot(self) -> KeyedStateSnapshot:
        """Take a consistent copy of every table: the synchronous part of a checkpoint.

        Costs one shallow ``dict.copy`` per table (about 25 ms per million keys) and starts
        a new epoch, so later writes copy the containers the snapshot shares.
        """
        tables = {name: table.copy() for name, table in self.tables.items() if table}
        plain = {name: self._plain[name] for name in tables.keys() & self._plain.keys()}
        self.epoch += 1
        return KeyedStateSnapshot(tables, plain)

    def restore(self, groups: Mapping[int, Mapping[str, Mapping[Any, Any]]]) -> None:
        """Load key group -> state name -> key -> plain value, as ``by_key_group`` returns.

        Meant for a fresh store: every key of the given key groups is loaded, for any state
        name, declared or not (a later declaration finds its table). The given lists and
        dicts are never changed: the first write to a restored container copies it.
        """
        for states in groups.values():
            for name, values in states.items():
                self._load(name, values)

    def note_copy(self) -> None:
        """Count one container copied on write (called by the state handles)."""
        self._copies += 1

    def statistics(self) -> KeyedStateStatistics:
        """Return how many states and entries the store holds, and its snapshot counters."""
        entries = sum(len(table) for table in self.tables.values())
        return KeyedStateStatistics(len(self.tables), entries, self.epoch, self._copies)

    def _declare(self, descriptor: StateDescriptor) -> dict[Any, Any]:
        self._declared[descriptor.name] = descriptor
        table = self.tables.setdefault(descriptor.name, {})
        to_plain = _to_plain(descriptor)
        if to_plain is not None:
            self._plain[descriptor.name] = to_plain
            _freeze(table)
        return table

    def _load(self, name: str, values: Mapping[Any, Any]) -> None:
        table = self.tables.setdefault(name, {})
        if name in self._plain:
            table.update((key, StateEntry(FROZEN, value)) for key, value in values.items())
        else:
            table.update(values)

    def __repr__(self) -> str:
        entries = sum(len(table) for table in self.tables.values())
        return (
            f"<KeyedStateStore states={sorted(self.tables)} entries={entries} "
            f"epoch={self.epoch} current_key={self.current_key!r}>"
        )


def _to_plain(descriptor: StateDescriptor) -> Callable[[Any], Any] | None:
    for kind, to_plain in _CONTAINERS:
        if isinstance(descriptor, kind):
            return to_plain
    return None


def _freeze(table: dict[Any, Any]) -> None:
    # Values restored before the declaration are plain; wrap them as entries no epoch owns.
    for key, value in table.items():
        table[key] = StateEntry(FROZEN, value)
