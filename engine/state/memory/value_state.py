"""HeapValueState: one value per key, in a dict on the heap."""

from __future__ import annotations

from typing import TypeVar

from lockgate.engine.state.handles import ValueState
from lockgate.engine.state.memory.versioned_table import VersionedTable
from lockgate.engine.state.scope import StateScope

__all__ = ["HeapValueState"]

V = TypeVar("V")


class HeapValueState(ValueState[V]):
    """One value per key; reads and writes apply to the key of the current record.

    ``update`` replaces the stored value wholesale, which is what keeps snapshots cheap and
    consistent: never change a value in place after ``update`` (or one read with ``value``);
    build a new one and ``update`` again. Updating to ``None`` clears the key, as in Flink.
    """

    __slots__ = ("_default", "_scope", "_table")

    def __init__(self, scope: StateScope, table: VersionedTable, default: V) -> None:
        self._scope = scope
        self._table = table
        self._default = default

    def value(self) -> V:
        """Return the current key's value, or the descriptor's default."""
        return self._table.get(self._scope.current_key, self._default)  # type: ignore[no-any-return]

    def update(self, value: V) -> None:
        """Set the current key's value; ``None`` clears it."""
        if value is None:
            self.clear()
        else:
            self._table.live[self._scope.current_key] = value

    def clear(self) -> None:
        """Remove the current key's value."""
        self._table.pop(self._scope.current_key, None)
