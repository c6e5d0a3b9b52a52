"""HeapReducingState: per key, one value that a reduce function folds new values into (heap)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from lockgate.engine.state.handles import ReducingState
from lockgate.engine.state.memory.layers import ABSENT
from lockgate.engine.state.memory.versioned_table import VersionedTable
from lockgate.engine.state.scope import StateScope

__all__ = ["HeapReducingState"]

V = TypeVar("V")


class HeapReducingState(ReducingState[V]):
    """Per key, ``reduce(previous, value)`` over every value added since the last ``clear``.

    The reduced value is replaced wholesale on each ``add``, so the reduce function must
    return a value rather than change ``previous`` in place (a snapshot may hold it).
    """

    __slots__ = ("_reduce", "_scope", "_table")

    def __init__(
        self, scope: StateScope, table: VersionedTable, reduce_function: Callable[[V, V], V]
    ) -> None:
        self._scope = scope
        self._table = table
        self._reduce = reduce_function

    def get(self) -> V | None:
        """Return the current key's reduced value, or ``None`` if nothing was added."""
        return self._table.get(self._scope.current_key)  # type: ignore[no-any-return]

    def add(self, value: V) -> None:
        """Fold ``value`` into the current key's reduced value."""
        table, key = self._table, self._scope.current_key
        previous = table.get(key, ABSENT)
        table.live[key] = value if previous is ABSENT else self._reduce(previous, value)

    def clear(self) -> None:
        """Remove the current key's reduced value."""
        self._table.pop(self._scope.current_key, None)
