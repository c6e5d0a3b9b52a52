"""Value, list, reducing and aggregating state whose values live in RocksDB, one entry per key.

Each handle implements its abstract type of ``handles`` (so a ``ValueState[V]`` annotation
fits either backend): it reads and writes the current key's entry through the state's
``StateEntries``, the store's write-back cache in front of RocksDB. A read of a cached key
returns the cached object, as the heap backend returns the stored one: never change a value
in place after ``update`` (a list state's ``get`` returns a copy; an aggregate function may
change its accumulator in place, which is written back as it is then).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any, Generic, TypeVar

from lockgate.engine.state.aggregate_function import AggregateFunction
from lockgate.engine.state.handles import AggregatingState, ListState, ReducingState, ValueState
from lockgate.engine.state.rocksdb.access import RestoreScope, StateAccess
from lockgate.engine.state.rocksdb.cache import ABSENT
from lockgate.engine.state.rocksdb.entries import StateEntries
from lockgate.engine.state.rocksdb.keys import decode_key, unframe

__all__ = [
    "RocksDBAggregatingState",
    "RocksDBListState",
    "RocksDBReducingState",
    "RocksDBTable",
    "RocksDBValueState",
]

V = TypeVar("V")
IN = TypeVar("IN")
OUT = TypeVar("OUT")

_KEY_GROUP_AND_STATE = 4  # bytes before the key frame


class RocksDBValueState(ValueState[V]):
    """A ``ValueState`` stored in RocksDB: one pickled value per key, cached.

    Same semantics as the heap ``ValueState``: the default until updated, and ``None``
    clears.
    """

    __slots__ = ("_default", "_entries", "_scope")

    def __init__(self, entries: StateEntries, scope: RestoreScope, default: V) -> None:
        self._entries = entries
        self._scope = scope
        self._default = default

    def value(self) -> V:
        """Return the current key's value, or the descriptor's default."""
        value = self._entries.entry(self._scope.current_key).value
        return self._default if value is ABSENT else value

    def update(self, value: V) -> None:
        """Set the current key's value; ``None`` clears it."""
        self._entries.put(self._scope.current_key, ABSENT if value is None else value)

    def clear(self) -> None:
        """Remove the current key's value."""
        self._entries.put(self._scope.current_key, ABSENT)


class RocksDBListState(ListState[V]):
    """A ``ListState`` stored in RocksDB: one entry per key holding every item's pickle.

    The cache holds the list itself: ``add`` appends to it, ``get`` returns a new list. A
    key whose list is emptied holds no entry.
    """

    __slots__ = ("_entries", "_scope")

    def __init__(self, entries: StateEntries, scope: RestoreScope) -> None:
        self._entries = entries
        self._scope = scope

    def get(self) -> list[V]:
        """Return the current key's list (empty if it has none)."""
        value = self._entries.entry(self._scope.current_key).value
        return [] if value is ABSENT else list(value)

    def add(self, value: V) -> None:
        """Append ``value`` to the current key's list."""
        entry = self._entries.live(self._scope.current_key)
        self._entries.changing(entry)
        if entry.value is ABSENT:
            entry.value = [value]
        else:
            entry.value.append(value)

    def add_all(self, values: Iterable[V]) -> None:
        """Append every one of ``values`` to the current key's list."""
        added = list(values)
        if not added:
            return
        entry = self._entries.live(self._scope.current_key)
        self._entries.changing(entry)
        if entry.value is ABSENT:
            entry.value = added
        else:
            entry.value.extend(added)

    def update(self, values: Iterable[V]) -> None:
        """Replace the current key's list with ``values``; an empty one clears the key."""
        replaced = list(values)
        self._entries.put(self._scope.current_key, replaced if replaced else ABSENT)

    def clear(self) -> None:
        """Remove the current key's list."""
        self._entries.put(self._scope.current_key, ABSENT)


class RocksDBReducingState(ReducingState[V]):
    """A ``ReducingState`` stored in RocksDB: one pickled reduced value per key, cached.

    ``add`` folds the new value into the cached reduced value.
    """

    __slots__ = ("_entries", "_reduce", "_scope")

    def __init__(
        self, entries: StateEntries, scope: RestoreScope, reduce_function: Callable[[V, V], V]
    ) -> None:
        self._entries = entries
        self._scope = scope
        self._reduce = reduce_function

    def get(self) -> V | None:
        """Return the current key's reduced value, or ``None`` if nothing was added."""
        value = self._entries.entry(self._scope.current_key).value
        return None if value is ABSENT else value

    def add(self, value: V) -> None:
        """Fold ``value`` into the current key's reduced value."""
        entry = self._entries.live(self._scope.current_key)
        self._entries.changing(entry)  # before the function, which may change it in place
        previous = entry.value
        entry.value = value if previous is ABSENT else self._reduce(previous, value)

    def clear(self) -> None:
        """Remove the current key's reduced value."""
        self._entries.put(self._scope.current_key, ABSENT)


class RocksDBAggregatingState(AggregatingState[IN, OUT]):
    """An ``AggregatingState`` stored in RocksDB: one pickled accumulator per key, cached.

    ``add`` folds the value into the cached accumulator (``AggregateFunction.add`` may change
    it in place: a snapshot holds what was written back before it).
    """

    __slots__ = ("_entries", "_function", "_scope")

    def __init__(
        self,
        entries: StateEntries,
        scope: RestoreScope,
        aggregate_function: AggregateFunction[IN, Any, OUT],
    ) -> None:
        self._entries = entries
        self._scope = scope
        self._function = aggregate_function

    def get(self) -> OUT | None:
        """Return the result for the current key, or ``None`` if nothing was added."""
        value = self._entries.entry(self._scope.current_key).value
        return None if value is ABSENT else self._function.get_result(value)

    def add(self, value: IN) -> None:
        """Fold ``value`` into the current key's accumulator."""
        entry = self._entries.live(self._scope.current_key)
        self._entries.changing(entry)  # before ``add``, which may change it in place
        function = self._function
        accumulator = function.create_accumulator() if entry.value is ABSENT else entry.value
        entry.value = function.add(value, accumulator)

    def clear(self) -> None:
        """Remove the current key's accumulator."""
        self._entries.put(self._scope.current_key, ABSENT)

    def prefetch(self, records: Iterable[Any], key_of: Callable[[Any], Any]) -> None:
        """Read the accumulators of the records' keys that are not cached (a multi-get)."""
        self._entries.prefetch(records, key_of)


class RocksDBTable(MutableMapping[Any, Any], Generic[V]):
    """Key -> value of one value (or reducing) state in RocksDB: the raw table of the store.

    ``get`` and item access go through the write-back cache (a cached key of a state
    without a TTL in one dict lookup: the table is what reduce and timers use per record);
    ``len`` and iteration write the cache back, then scan every key group, so they cost a
    pass over the state. Values with a TTL follow it as ``ValueState`` does.
    """

    __slots__ = ("_access", "_cache", "_cached", "_entries", "_groups")

    def __init__(self, entries: StateEntries, access: StateAccess, key_groups: int) -> None:
        self._entries = entries
        self._cache = entries.cache
        self._access = access
        self._groups = key_groups
        # With a TTL every access must check the deadline: an empty dict sends all to it.
        self._cached = entries.entries if type(entries) is StateEntries else {}

    def get(self, key: Any, default: Any = None) -> Any:
        """Return the value under ``key``, or ``default``."""
        entry = self._cached.get(key)
        if entry is None:
            entry = self._entries.entry(key)
        else:
            entry.used = True
        value = entry.value
        return default if value is ABSENT else value

    def __getitem__(self, key: Any) -> Any:
        value = self._entries.entry(key).value
        if value is ABSENT:
            raise KeyError(key)
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        entry = self._cached.get(key)
        if entry is None:
            self._entries.put(key, value)
            return
        cache = self._cache
        if entry.dirty != cache.epoch:  # before the change (see ``StateEntries.changing``)
            cache.mark_dirty(entry)
        entry.value = value  # only reads mark an entry used

    def prefetch(self, records: Iterable[Any], key_of: Callable[[Any], Any]) -> None:
        """Read the values of the records' keys that are not cached (a multi-get)."""
        self._entries.prefetch(records, key_of)

    def __delitem__(self, key: Any) -> None:
        if self._entries.live(key).value is ABSENT:
            raise KeyError(key)
        self._entries.put(key, ABSENT)

    def __contains__(self, key: object) -> bool:
        return self._entries.live(key).value is not ABSENT

    def __iter__(self) -> Iterator[Any]:
        self._entries.cache.flush()
        for group in range(self._groups):
            prefix = group.to_bytes(2, "big") + self._access.state_id
            for db_key, _ in self._access.scan(prefix):
                yield decode_key(unframe(db_key, _KEY_GROUP_AND_STATE)[0])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"<RocksDBTable state_id={self._access.state_id.hex()}>"
