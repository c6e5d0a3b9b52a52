"""RocksDBMapState: a map per key stored in RocksDB as one entry per (key, user key), cached.

``MapStateEntries`` holds a map state's cached user entries, per key a ``MapEntries``: each
user key's value is a ``CachedEntry`` of the store's write-back cache, so ``get``, ``put``,
``remove`` and ``contains`` of a cached user key touch neither RocksDB nor pickle. What
lists a whole map (``keys``, ``values``, ``items``, ``is_empty``) first writes the key's
dirty user entries back, then scans its RocksDB entries; ``clear`` drops them from the
cache and deletes them in RocksDB.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from rocksdict import WriteBatch

from lockgate.engine.state.handles import MapState
from lockgate.engine.state.rocksdb.access import RestoreScope, StateAccess
from lockgate.engine.state.rocksdb.cache import ABSENT, CachedEntry, WriteBackCache
from lockgate.engine.state.rocksdb.keys import decode_key, encode_key
from lockgate.engine.state.rocksdb.values import dump, load, split
from lockgate.engine.state.ttl import StateTtlConfig, TtlPolicy
from lockgate.engine.time.clock import Clock

__all__ = ["MapEntries", "MapStateEntries", "RocksDBMapState"]

UK = TypeVar("UK")
UV = TypeVar("UV")


class MapEntries:
    """The cached user entries of one key's map; it leaves its state once it holds none."""

    __slots__ = ("_maps", "key", "prefix", "values")

    def __init__(self, maps: dict[Any, MapEntries], key: Any, prefix: bytes) -> None:
        self._maps = maps
        self.key = key
        self.prefix = prefix
        self.values: dict[Any, CachedEntry] = {}

    def payload(self, value: Any) -> bytes:
        """Return the stored payload of one user key's value."""
        return dump(value)

    def forget(self, entry: CachedEntry) -> None:
        """Remove ``entry``, which the cache evicts; and this map, once it is empty."""
        del self.values[entry.key]
        if not self.values:
            del self._maps[self.key]

    def __repr__(self) -> str:
        return f"<MapEntries {self.key!r} cached={len(self.values)}>"


class MapStateEntries:
    """A map state's cached user entries by key, read from RocksDB when not cached, with TTL.

    With a TTL each user entry expires on its own: an expired one reads as ``ABSENT`` (and is
    deleted when written back), a write stamps a new deadline, a read refreshes it if the
    TTL says so. A value restored without a deadline expires ``ttl`` after the restore.
    """

    __slots__ = ("_policy", "_scope", "_ttl", "access", "cache", "maps")

    def __init__(
        self,
        cache: WriteBackCache,
        access: StateAccess,
        *,
        ttl: StateTtlConfig | None,
        clock: Clock,
        scope: RestoreScope,
    ) -> None:
        self.cache = cache
        self.access = access
        self.maps: dict[Any, MapEntries] = {}
        self._policy = None if ttl is None else TtlPolicy(ttl, clock)
        self._ttl = 0.0 if ttl is None else ttl.ttl
        self._scope = scope

    def entry(self, key: Any, user_key: Any, *, refresh: bool) -> CachedEntry:
        """Return the live entry of ``user_key`` in ``key``'s map, read if not cached."""
        entries = self._entries_of(key)
        entry = entries.values.get(user_key)
        if entry is None:
            entry = self._read(entries, user_key)
        else:
            entry.used = True
        policy = self._policy
        if policy is not None and entry.value is not ABSENT:
            assert entry.deadline is not None, "a value of a map with a TTL has a deadline"
            if entry.deadline <= policy.now():
                self._changing(entry, stamp=False)
                entry.value = ABSENT
            elif refresh and policy.refreshes_on_read:
                self._changing(entry, stamp=True)
        return entry

    def put(self, key: Any, user_key: Any, value: Any) -> None:
        """Set ``user_key`` to ``value`` in ``key``'s map (``ABSENT`` removes it), unread."""
        entries = self._entries_of(key)
        entry = entries.values.get(user_key)
        if entry is None:
            db_key = entries.prefix + encode_key(user_key)
            entry = entries.values[user_key] = CachedEntry(entries, user_key, db_key, value, None)
            self._changing(entry, stamp=True)
            self.cache.admit(entry)
        else:
            self._changing(entry, stamp=True)
            entry.value = value

    def write_back(self, key: Any) -> bytes:
        """Write ``key``'s dirty user entries to RocksDB; return the key's RocksDB prefix.

        With a TTL the key's entries leave the cache too: the scan that follows reads and
        refreshes deadlines in RocksDB itself.
        """
        entries = self.maps.get(key)
        if entries is None:
            return self.access.key_of(key)
        self.cache.flush_entries(entries.values.values())
        if self._policy is not None:
            self.drop(key)
        return entries.prefix

    def drop(self, key: Any) -> None:
        """Take ``key``'s user entries out of the cache without writing them."""
        entries = self.maps.pop(key, None)
        if entries is not None:
            for entry in entries.values.values():
                self.cache.drop(entry)

    def _entries_of(self, key: Any) -> MapEntries:
        entries = self.maps.get(key)
        if entries is None:
            entries = self.maps[key] = MapEntries(self.maps, key, self.access.key_of(key))
        return entries

    def _read(self, entries: MapEntries, user_key: Any) -> CachedEntry:
        db_key = entries.prefix + encode_key(user_key)
        stored = self.access.get(db_key)
        if stored is None:
            entry = CachedEntry(entries, user_key, db_key, ABSENT, None)
        else:
            deadline, payload = split(stored)
            if deadline is None and self._policy is not None:
                deadline = self._scope.restored_at + self._ttl
            entry = CachedEntry(entries, user_key, db_key, load(payload), deadline)
        entries.values[user_key] = entry
        self.cache.loads += 1
        self.cache.admit(entry)
        return entry

    def _changing(self, entry: CachedEntry, *, stamp: bool) -> None:
        # Before the change, as ``StateEntries.changing``; only reads mark an entry used.
        if entry.dirty != self.cache.epoch:
            self.cache.mark_dirty(entry)
        if stamp and self._policy is not None:
            entry.deadline = self._policy.deadline()

    def __repr__(self) -> str:
        return f"<MapStateEntries state_id={self.access.state_id.hex()} keys={len(self.maps)}>"


class RocksDBMapState(MapState[UK, UV], Generic[UK, UV]):
    """A ``MapState`` stored in RocksDB: each user key is an entry of its own, cached.

    ``get``, ``put``, ``remove`` and ``contains`` touch one user entry, never the whole map;
    ``keys``, ``values``, ``items``, ``is_empty`` and ``clear`` scan the current key's
    entries. With a TTL each entry expires on its own, as in the heap ``MapState``. User
    keys are encoded as the module ``rocksdb.keys`` says: equal user keys must give equal
    bytes. A key whose last entry is removed holds no state.
    """

    __slots__ = ("_entries", "_scope")

    def __init__(self, entries: MapStateEntries, scope: RestoreScope) -> None:
        self._entries = entries
        self._scope = scope

    def get(self, key: UK) -> UV | None:
        """Return the value under ``key`` in the current key's map, or ``None``."""
        value = self._entries.entry(self._scope.current_key, key, refresh=True).value
        return None if value is ABSENT else value

    def put(self, key: UK, value: UV) -> None:
        """Set ``key`` to ``value`` in the current key's map."""
        self._entries.put(self._scope.current_key, key, value)

    def put_all(self, entries: Mapping[UK, UV]) -> None:
        """Set every key of ``entries`` in the current key's map."""
        current, put = self._scope.current_key, self._entries.put
        for key, value in entries.items():
            put(current, key, value)

    def remove(self, key: UK) -> None:
        """Remove ``key`` from the current key's map, if it is there."""
        self._entries.put(self._scope.current_key, key, ABSENT)

    def contains(self, key: UK) -> bool:
        """Whether the current key's map holds ``key`` (a read: a TTL may refresh it)."""
        entry = self._entries.entry(self._scope.current_key, key, refresh=True)
        return entry.value is not ABSENT

    def keys(self) -> list[UK]:
        """Return the user keys of the current key's map."""
        return [key for key, _ in self._scanned()]

    def values(self) -> list[UV]:
        """Return the values of the current key's map."""
        return [load(payload) for _, payload in self._scanned()]

    def items(self) -> list[tuple[UK, UV]]:
        """Return the (user key, value) pairs of the current key's map."""
        return [(key, load(payload)) for key, payload in self._scanned()]

    def is_empty(self) -> bool:
        """Whether the current key's map holds nothing (live)."""
        return not self._scanned()

    def clear(self) -> None:
        """Remove the current key's map."""
        current = self._scope.current_key
        self._entries.drop(current)
        access = self._entries.access
        batch = WriteBatch(raw_mode=True)
        for db_key, _ in access.scan(access.key_of(current)):
            batch.delete(db_key)
        if len(batch):
            access.apply(batch)

    def _scanned(self) -> list[tuple[Any, bytes]]:
        """Return (user key, payload) of the live entries, dropping expired ones."""
        prefix = self._entries.write_back(self._scope.current_key)
        access = self._entries.access
        start = len(prefix)
        live = []
        for db_key, stored in list(access.scan(prefix)):
            payload = access.checked(db_key, stored)
            if payload is not None:
                live.append((decode_key(db_key[start:]), payload))
        return live
