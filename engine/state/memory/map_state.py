"""HeapMapState: a map from user keys to values per key (or per subtask), on the heap."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from lockgate.engine.state.handles import MapState
from lockgate.engine.state.memory.copy_on_write import CopyOnWriteState

__all__ = ["HeapMapState"]

UK = TypeVar("UK")
UV = TypeVar("UV")


class HeapMapState(CopyOnWriteState[dict[UK, UV]], MapState[UK, UV]):
    """A dict per key; ``put`` and ``remove`` are O(1) amortised, views are copies.

    The dict is copied on the first write after a snapshot, so snapshots never change; the
    values themselves are shared, so never change a value in place after ``put``. A key
    whose map becomes empty holds no state at all.
    """

    __slots__ = ()

    @staticmethod
    def to_plain(value: dict[UK, UV]) -> dict[UK, UV]:
        """Return a new plain dict holding the entries of a stored map."""
        return dict(value)

    def get(self, key: UK) -> UV | None:
        """Return the value under ``key`` in the current key's map, or ``None``."""
        entries = self._readable()
        return None if entries is None else entries.get(key)

    def put(self, key: UK, value: UV) -> None:
        """Set ``key`` to ``value`` in the current key's map."""
        self._writable().value[key] = value

    def put_all(self, entries: Mapping[UK, UV]) -> None:
        """Set every key of ``entries`` in the current key's map."""
        if entries:
            self._writable().value.update(entries)

    def remove(self, key: UK) -> None:
        """Remove ``key`` from the current key's map, if it is there."""
        if not self.contains(key):
            return
        entries = self._writable().value
        del entries[key]
        if not entries:
            self.clear()

    def contains(self, key: UK) -> bool:
        """Whether the current key's map holds ``key``."""
        entries = self._readable()
        return entries is not None and key in entries

    def keys(self) -> list[UK]:
        """Return the user keys of the current key's map."""
        entries = self._readable()
        return [] if entries is None else list(entries)

    def values(self) -> list[UV]:
        """Return the values of the current key's map."""
        entries = self._readable()
        return [] if entries is None else list(entries.values())

    def items(self) -> list[tuple[UK, UV]]:
        """Return the (user key, value) pairs of the current key's map."""
        entries = self._readable()
        return [] if entries is None else list(entries.items())

    def is_empty(self) -> bool:
        """Whether the current key's map holds nothing."""
        return self._readable() is None

    def _empty(self) -> dict[UK, UV]:
        return {}

    def _copy(self, value: dict[UK, UV]) -> dict[UK, UV]:
        return dict(value)
