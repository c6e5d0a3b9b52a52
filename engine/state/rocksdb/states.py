"""Value, list, reducing and aggregating state whose values live in RocksDB, one entry per key.

Each handle implements its abstract type of ``handles`` (so a ``ValueState[V]`` annotation
fits either backend): it reads and writes RocksDB entries through a ``StateAccess``. Every
read unpickles a new object, so a value a user changes in place never changes what is
stored, and nothing is copied on write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any, Generic, TypeVar

from lockgate.engine.state.aggregate_function import AggregateFunction
from lockgate.engine.state.handles import AggregatingState, ListState, ReducingState, ValueState
from lockgate.engine.state.rocksdb.access import StateAccess
from lockgate.engine.state.rocksdb.keys import decode_key, unframe
from lockgate.engine.state.rocksdb.values import dump, dump_items, load, load_items

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
    """A ``ValueState`` stored in RocksDB: one pickled value per key.

    Same semantics as the heap ``ValueState``: the default until updated, and ``None``
    clears. Values read are new objects; changing one changes nothing until ``update``.
    """

    __slots__ = ("_access", "_default")

    def __init__(self, access: StateAccess, default: V) -> None:
        self._access = access
        self._default = default

    def value(self) -> V:
        """Return the current key's value, or the descriptor's default."""
        payload = self._access.read(self._access.key())
        return self._default if payload is None else load(payload)

    def update(self, value: V) -> None:
        """Set the current key's value; ``None`` clears it."""
        if value is None:
            self.clear()
        else:
            self._access.write(self._access.key(), dump(value))

    def clear(self) -> None:
        """Remove the current key's value."""
        self._access.delete(self._access.key())


class RocksDBListState(ListState[V]):
    """A ``ListState`` stored in RocksDB: one entry per key holding every item's pickle.

    ``add`` appends the new item's bytes to the stored ones without unpickling them; ``get``
    returns a new list. A key whose list is emptied holds no entry.
    """

    __slots__ = ("_access",)

    def __init__(self, access: StateAccess) -> None:
        self._access = access

    def get(self) -> list[V]:
        """Return the current key's list (empty if it has none)."""
        payload = self._access.read(self._access.key())
        return [] if payload is None else load_items(payload)

    def add(self, value: V) -> None:
        """Append ``value`` to the current key's list."""
        self._append(dump_items((value,)))

    def add_all(self, values: Iterable[V]) -> None:
        """Append every one of ``values`` to the current key's list."""
        payload = dump_items(values)
        if payload:
            self._append(payload)

    def update(self, values: Iterable[V]) -> None:
        """Replace the current key's list with ``values``; an empty one clears the key."""
        payload = dump_items(values)
        if payload:
            self._access.write(self._access.key(), payload)
        else:
            self.clear()

    def clear(self) -> None:
        """Remove the current key's list."""
        self._access.delete(self._access.key())

    def _append(self, payload: bytes) -> None:
        key = self._access.key()
        stored = self._access.live(key)
        self._access.write(key, payload if stored is None else stored + payload)


class RocksDBReducingState(ReducingState[V]):
    """A ``ReducingState`` stored in RocksDB: one pickled reduced value per key.

    ``add`` reads the reduced value, folds the new one in and stores the result.
    """

    __slots__ = ("_access", "_reduce")

    def __init__(self, access: StateAccess, reduce_function: Callable[[V, V], V]) -> None:
        self._access = access
        self._reduce = reduce_function

    def get(self) -> V | None:
        """Return the current key's reduced value, or ``None`` if nothing was added."""
        payload = self._access.read(self._access.key())
        return None if payload is None else load(payload)

    def add(self, value: V) -> None:
        """Fold ``value`` into the current key's reduced value."""
        key = self._access.key()
        previous = self._access.live(key)
        reduced = value if previous is None else self._reduce(load(previous), value)
        self._access.write(key, dump(reduced))

    def clear(self) -> None:
        """Remove the current key's reduced value."""
        self._access.delete(self._access.key())


class RocksDBAggregatingState(AggregatingState[IN, OUT]):
    """An ``AggregatingState`` stored in RocksDB: one pickled accumulator per key.

    ``add`` unpickles the accumulator (a new object, so ``AggregateFunction.add`` may change
    it in place), folds the value in and stores it again.
    """

    __slots__ = ("_access", "_function")

    def __init__(
        self, access: StateAccess, aggregate_function: AggregateFunction[IN, Any, OUT]
    ) -> None:
        self._access = access
        self._function = aggregate_function

    def get(self) -> OUT | None:
        """Return the result for the current key, or ``None`` if nothing was added."""
        payload = self._access.read(self._access.key())
        return None if payload is None else self._function.get_result(load(payload))

    def add(self, value: IN) -> None:
        """Fold ``value`` into the current key's accumulator."""
        key = self._access.key()
        previous = self._access.live(key)
        function = self._function
        accumulator = function.create_accumulator() if previous is None else load(previous)
        self._access.write(key, dump(function.add(value, accumulator)))

    def clear(self) -> None:
        """Remove the current key's accumulator."""
        self._access.delete(self._access.key())


class RocksDBTable(MutableMapping[Any, Any], Generic[V]):
    """Key -> value of one value (or reducing) state in RocksDB: the raw table of the store.

    ``get`` and item access read one entry; ``len`` and iteration scan every key group, so
    they cost a pass over the state. Values with a TTL follow it as ``ValueState`` does.
    """

    __slots__ = ("_access", "_groups")

    def __init__(self, access: StateAccess, key_groups: int) -> None:
        self._access = access
        self._groups = key_groups

    def get(self, key: Any, default: Any = None) -> Any:
        """Return the value under ``key``, or ``default``."""
        payload = self._access.read(self._access.key_of(key))
        return default if payload is None else load(payload)

    def __getitem__(self, key: Any) -> Any:
        payload = self._access.read(self._access.key_of(key))
        if payload is None:
            raise KeyError(key)
        return load(payload)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._access.write(self._access.key_of(key), dump(value))

    def __delitem__(self, key: Any) -> None:
        db_key = self._access.key_of(key)
        if self._access.live(db_key) is None:
            raise KeyError(key)
        self._access.delete(db_key)

    def __contains__(self, key: object) -> bool:
        return self._access.live(self._access.key_of(key)) is not None

    def __iter__(self) -> Iterator[Any]:
        for group in range(self._groups):
            prefix = group.to_bytes(2, "big") + self._access.state_id
            for db_key, _ in self._access.scan(prefix):
                yield decode_key(unframe(db_key, _KEY_GROUP_AND_STATE)[0])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"<RocksDBTable state_id={self._access.state_id.hex()}>"
