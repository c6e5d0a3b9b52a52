"""CopyOnWriteState: the base of states that keep a mutable container per key."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from lockgate.engine.state.memory.entry import StateEntry
from lockgate.engine.state.memory.versioned_table import VersionedTable
from lockgate.engine.state.scope import StateScope

__all__ = ["CopyOnWriteState"]

C = TypeVar("C")


class CopyOnWriteState(Generic[C]):
    """Per-key containers in ``StateEntry`` wrappers, copied on the first write after a snapshot.

    Invariant: no write ever changes a container a snapshot can see. A write to an entry of
    the current epoch changes it in place (O(1)); a write to an older entry first puts a
    copy owned by the current epoch in the table's live layer (once per key per snapshot);
    a key whose container becomes empty is removed, so tables never hold empty entries.
    Reads go through ``VersionedTable.get``: a dict's own ``get`` while nothing is frozen.
    """

    __slots__ = ("_scope", "_table")

    def __init__(self, scope: StateScope, table: VersionedTable) -> None:
        self._scope = scope
        self._table = table

    @staticmethod
    def to_plain(value: Any) -> Any:
        """Return the plain value (a new list or dict, or the accumulator) of a container."""
        raise NotImplementedError

    def clear(self) -> None:
        """Remove the current key's state."""
        self._table.pop(self._scope.current_key, None)

    def _readable(self) -> C | None:
        entry = self._table.get(self._scope.current_key)
        return None if entry is None else entry.value

    def _writable(self) -> StateEntry[C]:
        """Return the current key's entry, owned by the current epoch (made or copied)."""
        scope = self._scope
        entry = self._table.get(scope.current_key)
        if entry is not None and entry.epoch == scope.epoch:
            return entry  # type: ignore[no-any-return]
        return self._own(entry)

    def _own(self, entry: StateEntry[C] | None) -> StateEntry[C]:
        scope = self._scope
        if entry is None:
            value = self._empty()
        else:
            value = self._copy(entry.value)
            scope.note_copy()
        owned = self._table.live[scope.current_key] = StateEntry(scope.epoch, value)
        return owned

    def _replace(self, value: C) -> None:
        self._table.live[self._scope.current_key] = StateEntry(self._scope.epoch, value)

    def _empty(self) -> C:
        raise NotImplementedError

    def _copy(self, value: C) -> C:
        raise NotImplementedError
