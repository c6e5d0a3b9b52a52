"""RocksDBMapState: a map per key stored in RocksDB as one entry per (key, user key)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from rocksdict import WriteBatch

from lockgate.engine.state.handles import MapState
from lockgate.engine.state.rocksdb.access import StateAccess
from lockgate.engine.state.rocksdb.keys import decode_key, encode_key
from lockgate.engine.state.rocksdb.values import dump, load

__all__ = ["RocksDBMapState"]

UK = TypeVar("UK")
UV = TypeVar("UV")


class RocksDBMapState(MapState[UK, UV], Generic[UK, UV]):
    """A ``MapState`` stored in RocksDB: each user key is an entry of its own.

    ``get``, ``put``, ``remove`` and ``contains`` touch one entry, never the whole map;
    ``keys``, ``values``, ``items``, ``is_empty`` and ``clear`` scan the current key's
    entries. With a TTL each entry expires on its own, as in the heap ``MapState``. User
    keys are encoded as the module ``rocksdb.keys`` says: equal user keys must give equal
    bytes. A key whose last entry is removed holds no state.
    """

    __slots__ = ("_access",)

    def __init__(self, access: StateAccess) -> None:
        self._access = access

    def get(self, key: UK) -> UV | None:
        """Return the value under ``key`` in the current key's map, or ``None``."""
        payload = self._access.read(self._entry(key))
        return None if payload is None else load(payload)

    def put(self, key: UK, value: UV) -> None:
        """Set ``key`` to ``value`` in the current key's map."""
        self._access.write(self._entry(key), dump(value))

    def put_all(self, entries: Mapping[UK, UV]) -> None:
        """Set every key of ``entries`` in the current key's map, in one atomic write."""
        prefix = self._access.key()
        batch = WriteBatch(raw_mode=True)
        for key, value in entries.items():
            batch.put(prefix + encode_key(key), self._access.stored(dump(value)))
        if len(batch):
            self._access.apply(batch)

    def remove(self, key: UK) -> None:
        """Remove ``key`` from the current key's map, if it is there."""
        self._access.delete(self._entry(key))

    def contains(self, key: UK) -> bool:
        """Whether the current key's map holds ``key`` (a read: a TTL may refresh it)."""
        return self._access.read(self._entry(key)) is not None

    def keys(self) -> list[UK]:
        """Return the user keys of the current key's map."""
        return [key for key, _ in self._entries()]

    def values(self) -> list[UV]:
        """Return the values of the current key's map."""
        return [load(payload) for _, payload in self._entries()]

    def items(self) -> list[tuple[UK, UV]]:
        """Return the (user key, value) pairs of the current key's map."""
        return [(key, load(payload)) for key, payload in self._entries()]

    def is_empty(self) -> bool:
        """Whether the current key's map holds nothing (live)."""
        return not self._entries()

    def clear(self) -> None:
        """Remove the current key's map."""
        batch = WriteBatch(raw_mode=True)
        for db_key, _ in self._access.scan(self._access.key()):
            batch.delete(db_key)
        if len(batch):
            self._access.apply(batch)

    def _entry(self, key: UK) -> bytes:
        return self._access.key() + encode_key(key)

    def _entries(self) -> list[tuple[Any, bytes]]:
        """Return (user key, payload) of the live entries, dropping expired ones."""
        prefix = self._access.key()
        start = len(prefix)
        live = []
        for db_key, stored in list(self._access.scan(prefix)):
            payload = self._access.checked(db_key, stored)
            if payload is not None:
                live.append((decode_key(db_key[start:]), payload))
        return live
