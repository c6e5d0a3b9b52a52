"""StateEntries: one state's values by key, through the store's write-back cache to RocksDB.

The handles of value, list, reducing and aggregating state (and the raw table) work on a
``StateEntries``: ``entry`` returns a key's ``CachedEntry`` (read from RocksDB and cached if
it was not), ``put`` replaces a value without reading the old one, ``changing`` marks a
value about to change (replaced or changed in place: always called before, so that a
snapshot's open window keeps the old value first, see ``rocksdb.frozen``). Each state has
one, shared by all its handles, so two handles of one state see each other's writes.
``TtlStateEntries`` adds a state's TTL: an expired value reads as ``ABSENT`` (and is
deleted when next written back), a write stamps a new deadline, a read refreshes it if the
TTL says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from lockgate.engine.state.rocksdb.access import RestoreScope, StateAccess
from lockgate.engine.state.rocksdb.cache import ABSENT, CachedEntry, WriteBackCache
from lockgate.engine.state.rocksdb.values import dump, dump_items, load, load_items, split
from lockgate.engine.state.ttl import StateTtlConfig, TtlPolicy
from lockgate.engine.time.clock import Clock

__all__ = ["StateEntries", "TtlStateEntries", "state_entries"]


class StateEntries:
    """The cached entries of one state without a TTL, by key (see the module docstring).

    Invariant: ``entries`` holds exactly the entries the cache counts for this state; a
    value read is the cached object itself, so a handle never hands one out to be changed
    (list state returns copies).
    """

    __slots__ = ("_load", "_prefetched_at", "access", "cache", "entries", "payload")

    def __init__(self, cache: WriteBackCache, access: StateAccess, *, items: bool) -> None:
        self.cache = cache
        self.entries: dict[Any, CachedEntry] = {}
        self.access = access
        self.payload: Callable[[Any], bytes] = dump_items if items else dump
        self._load: Callable[[bytes], Any] = load_items if items else load
        self._prefetched_at = -1  # the cache's loads when a prefetch last looked

    def entry(self, key: Any) -> CachedEntry:
        """Return the entry of ``key`` (value ``ABSENT`` if it holds none), as a read."""
        entry = self.entries.get(key)
        if entry is None:
            return self._read(key)
        entry.used = True
        return entry

    live = entry
    """Return the entry of ``key`` without refreshing a TTL (there is none here)."""

    def put(self, key: Any, value: Any) -> None:
        """Set ``key``'s value to ``value`` (``ABSENT`` clears it) without reading RocksDB."""
        entry = self.entries.get(key)
        if entry is None:
            entry = self.entries[key] = CachedEntry(self, key, self.access.key_of(key), value, None)
            self.changing(entry)
            self.cache.admit(entry)
        else:
            self.changing(entry)
            entry.value = value

    def changing(self, entry: CachedEntry) -> None:
        """Mark ``entry``'s value as written: call it before setting or changing it in place.

        A write alone does not mark it ``used``: a key read again by a later record is hot,
        one read and written back by a single record is not (each record reads first).
        """
        if entry.dirty != self.cache.epoch:
            self.cache.mark_dirty(entry)

    def forget(self, entry: CachedEntry) -> None:
        """Remove ``entry``, which the cache evicts."""
        del self.entries[entry.key]

    def prefetch(self, records: Iterable[Any], key_of: Callable[[Any], Any]) -> None:
        """Read the values of the records' keys that are not cached, in one multi-get.

        For a batch of records, before its accesses. Skipped while nothing was read from
        RocksDB since the last prefetch looked (the batches' keys were cached), so that a
        state within the cache pays one comparison per batch. At most half the cache is
        read at once, so that the keys read stay until they are used.
        """
        cache = self.cache
        if cache.loads == self._prefetched_at:
            return
        self._prefetched_at = cache.loads
        entries = self.entries
        missing = [key for key in dict.fromkeys(map(key_of, records)) if key not in entries]
        del missing[max(1, cache.capacity // 2) :]
        if missing:
            db_keys = [self.access.key_of(key) for key in missing]
            fetched = self.access.get_many(db_keys)
            for key, db_key, stored in zip(missing, db_keys, fetched, strict=True):
                self._admit(key, db_key, stored)  # the newest: the sweep takes the oldest

    def _read(self, key: Any) -> CachedEntry:
        db_key = self.access.key_of(key)
        return self._admit(key, db_key, self.access.get(db_key))

    def _admit(self, key: Any, db_key: bytes, stored: bytes | None) -> CachedEntry:
        if stored is None:
            entry = CachedEntry(self, key, db_key, ABSENT, None)
        else:
            deadline, payload = split(stored)
            entry = CachedEntry(self, key, db_key, self._load(payload), self._deadline(deadline))
        self.entries[key] = entry
        self.cache.loads += 1
        self.cache.admit(entry)
        return entry  # not ``used`` yet: its first access marks it

    def _deadline(self, stored: float | None) -> float | None:
        return None

    def __repr__(self) -> str:
        state_id = self.access.state_id.hex()
        return f"<{type(self).__name__} state_id={state_id} cached={len(self.entries)}>"


class TtlStateEntries(StateEntries):
    """The cached entries of one state with a TTL: deadlines kept with the values.

    A value restored without a deadline expires ``ttl`` after the restore.
    """

    __slots__ = ("_policy", "_scope", "_ttl")

    def __init__(
        self,
        cache: WriteBackCache,
        access: StateAccess,
        *,
        items: bool,
        ttl: StateTtlConfig,
        clock: Clock,
        scope: RestoreScope,
    ) -> None:
        super().__init__(cache, access, items=items)
        self._policy = TtlPolicy(ttl, clock)
        self._ttl = ttl.ttl
        self._scope = scope

    def entry(self, key: Any) -> CachedEntry:
        """Return the live entry of ``key``, its deadline refreshed if reads refresh."""
        entry = self.live(key)
        if entry.value is not ABSENT and self._policy.refreshes_on_read:
            self.changing(entry)
        return entry

    def live(self, key: Any) -> CachedEntry:
        """Return the entry of ``key``; one that expired reads as ``ABSENT`` from now on."""
        entry = super().entry(key)
        if entry.value is not ABSENT:
            assert entry.deadline is not None, "a value of a state with a TTL has a deadline"
            if entry.deadline <= self._policy.now():
                super().changing(entry)  # deleted when written back
                entry.value = ABSENT
        return entry

    def changing(self, entry: CachedEntry) -> None:
        """Mark ``entry``'s value as written (call it before): it lives a full ``ttl`` from now."""
        super().changing(entry)
        entry.deadline = self._policy.deadline()

    def _deadline(self, stored: float | None) -> float | None:
        return self._scope.restored_at + self._ttl if stored is None else stored


def state_entries(
    cache: WriteBackCache,
    access: StateAccess,
    *,
    items: bool,
    ttl: StateTtlConfig | None,
    clock: Clock,
    scope: RestoreScope,
) -> StateEntries:
    """Return the entries of a state (``items``: stored as a list's items), with its TTL."""
    if ttl is None:
        return StateEntries(cache, access, items=items)
    return TtlStateEntries(cache, access, items=items, ttl=ttl, clock=clock, scope=scope)
