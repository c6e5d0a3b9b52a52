"""HeapListState: a list of values per key (or per subtask, as operator state), on the heap."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from lockgate.engine.state.handles import ListState
from lockgate.engine.state.memory.copy_on_write import CopyOnWriteState

__all__ = ["HeapListState"]

V = TypeVar("V")


class HeapListState(CopyOnWriteState[list[V]], ListState[V]):
    """A list per key; ``add`` is O(1) amortised, ``get`` returns a copy.

    The list is copied on the first write after a snapshot, so snapshots never change; the
    elements themselves are shared, so never change an element in place after adding it.
    A key whose list becomes empty holds no state at all.
    """

    __slots__ = ()

    @staticmethod
    def to_plain(value: list[V]) -> list[V]:
        """Return a new plain list holding the items of a stored list."""
        return list(value)

    def get(self) -> list[V]:
        """Return a copy of the current key's list (empty if it has none)."""
        items = self._readable()
        return [] if items is None else list(items)

    def add(self, value: V) -> None:
        """Append ``value`` to the current key's list."""
        self._writable().value.append(value)

    def add_all(self, values: Iterable[V]) -> None:
        """Append every one of ``values`` to the current key's list."""
        items = list(values)
        if items:
            self._writable().value.extend(items)

    def update(self, values: Iterable[V]) -> None:
        """Replace the current key's list with ``values``; an empty one clears the key."""
        items = list(values)
        if items:
            self._replace(items)
        else:
            self.clear()

    def _empty(self) -> list[V]:
        return []

    def _copy(self, value: list[V]) -> list[V]:
        return list(value)
