"""Keyed state: per-key values scoped to the key of the record being processed."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from lockgate.engine.state.descriptors import StateDescriptor, ValueStateDescriptor

__all__ = ["KeyedStateStore", "ValueState"]

V = TypeVar("V")


class KeyedStateStore:
    """The keyed state of one operator subtask: a table per state name, keyed by key.

    Reads and writes go to the ``current_key``, which the operator sets before it calls the
    user function for a record. Keys are stored as they are; their key groups are computed
    only when state has to be split (snapshots and rescaling), never per record.
    """

    __slots__ = ("_declared", "current_key", "tables")

    def __init__(self) -> None:
        self.tables: dict[str, dict[Any, Any]] = {}
        self._declared: dict[str, StateDescriptor] = {}
        self.current_key: Any = None

    def table(self, descriptor: StateDescriptor) -> dict[Any, Any]:
        """Return the table behind ``descriptor``, creating it on first use."""
        known = self._declared.setdefault(descriptor.name, descriptor)
        if known != descriptor:
            raise ValueError(
                f"state '{descriptor.name}' was declared twice, differently: {known} and "
                f"{descriptor}; give each state its own name"
            )
        return self.tables.setdefault(descriptor.name, {})

    def value_state(self, descriptor: ValueStateDescriptor[V]) -> ValueState[V]:
        """Return the ``ValueState`` declared by ``descriptor``."""
        return ValueState(self, self.table(descriptor), descriptor.default)

    def key_count(self) -> int:
        """How many distinct keys hold state in any table."""
        keys: set[Any] = set()
        for table in self.tables.values():
            keys.update(table)
        return len(keys)


class ValueState(Generic[V]):
    """One value per key; reads and writes apply to the key of the current record."""

    __slots__ = ("_default", "_store", "_table")

    def __init__(self, store: KeyedStateStore, table: dict[Any, Any], default: V) -> None:
        self._store = store
        self._table = table
        self._default = default

    def value(self) -> V:
        """Return the current key's value, or the descriptor's default."""
        return self._table.get(self._store.current_key, self._default)  # type: ignore[no-any-return]

    def update(self, value: V) -> None:
        """Set the current key's value."""
        self._table[self._store.current_key] = value

    def clear(self) -> None:
        """Remove the current key's value."""
        self._table.pop(self._store.current_key, None)
