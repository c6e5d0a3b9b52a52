"""WriteBackCache: a bounded cache of hot keys' values in front of one subtask's RocksDB database.

Every state handle of a RocksDB store reads and writes through this cache. An entry holds a
key's value as a Python object (a value, a list, an accumulator, a map's one user value; or
``ABSENT``: known to hold nothing) with its RocksDB key, encoded once when the entry was
made, so a read of a cached key touches neither RocksDB nor pickle, and a write only marks
the entry dirty. Dirty entries reach RocksDB in one ``WriteBatch`` when they are evicted and
when the store flushes (before every snapshot, before every scan of the database).

Eviction is a second-chance (clock) sweep in the order entries were made: an entry read
again since the sweep last passed it goes round once more, the others leave, so hot keys
stay, and keys that pass through once (a record reads and writes its key) leave without
costing the sweep a round. A full cache evicts an eighth of its entries at once (one
batch for their writes).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Protocol

from rocksdict import WriteBatch

from lockgate.engine.state.rocksdb.database import StateDatabase
from lockgate.engine.state.rocksdb.values import PLAIN, stamped

__all__ = ["ABSENT", "CacheHome", "CacheStatistics", "CachedEntry", "WriteBackCache"]


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final[Any] = _Absent()
"""The value of an entry whose key holds nothing (never stored, cleared, or expired)."""

_EVICT_SHARE = 8  # a full cache evicts 1/8 of its entries at once


class CacheHome(Protocol):
    """What holds cached entries (one state's, or one key's map): it encodes and forgets them."""

    def payload(self, value: Any) -> bytes:
        """Return the stored payload of a value (without its header)."""

    def forget(self, entry: CachedEntry) -> None:
        """Remove ``entry``, which the cache evicts."""


class CachedEntry:
    """One key's value of one state (or one user key's of a map), as the cache holds it.

    ``value`` is the live Python object (``ABSENT`` if the key holds nothing); ``db_key`` its
    RocksDB key; ``deadline`` the clock time it expires at (``None``: the state has no TTL);
    ``dirty`` says RocksDB does not hold ``value`` yet; ``used`` that it was used since the
    eviction sweep last passed it. ``home`` is ``None`` once the entry left the cache.
    """

    __slots__ = ("db_key", "deadline", "dirty", "home", "key", "used", "value")

    def __init__(
        self, home: CacheHome, key: Any, db_key: bytes, value: Any, deadline: float | None
    ) -> None:
        self.home: CacheHome | None = home
        self.key = key
        self.db_key = db_key
        self.value = value
        self.deadline = deadline
        self.dirty = False
        self.used = False

    def __repr__(self) -> str:
        return f"<CachedEntry {self.key!r}={self.value!r} dirty={self.dirty}>"


@dataclass(frozen=True, slots=True)
class CacheStatistics:
    """A point-in-time view of a ``WriteBackCache``.

    Attributes:
        capacity: the most entries it holds.
        entries: entries it holds now.
        dirty: entries RocksDB does not hold yet.
        loads: entries read from RocksDB (reads of keys that were not cached).
        evictions: entries evicted.
        written: entries written to RocksDB (puts and deletes), by evictions and flushes.
        flushes: flushes that wrote at least one entry.
    """

    capacity: int
    entries: int
    dirty: int
    loads: int
    evictions: int
    written: int
    flushes: int


class WriteBackCache:
    """At most ``capacity`` entries of one store's states, written back to RocksDB in batches.

    Invariant: RocksDB plus the dirty entries hold every state exactly: an entry leaves the
    cache only after its value was written (or, ``drop``, once RocksDB needs it no more), and
    ``flush`` leaves no entry dirty. It holds at most ``capacity`` entries (at least 1).
    """

    __slots__ = (
        "_database",
        "_dirty",
        "_evictions",
        "_flushes",
        "_order",
        "_size",
        "_written",
        "capacity",
        "loads",
    )

    def __init__(self, database: StateDatabase, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"a write-back cache holds at least 1 entry; got {capacity}")
        self.capacity = capacity
        self.loads = 0
        self._database = database
        self._order: deque[CachedEntry] = deque()
        self._dirty: list[CachedEntry] = []
        self._size = 0
        self._evictions = 0
        self._written = 0
        self._flushes = 0

    def admit(self, entry: CachedEntry) -> None:
        """Count ``entry``, which its home holds from now on; first evict if the cache is full.

        ``entry`` itself is never evicted here, so its caller may still change it.
        """
        if self._size >= self.capacity:
            self._evict()
        self._order.append(entry)
        self._size += 1

    def mark_dirty(self, entry: CachedEntry) -> None:
        """Remember that RocksDB does not hold ``entry``'s value yet."""
        entry.dirty = True
        self._dirty.append(entry)
        if len(self._dirty) > 2 * self.capacity:  # evicted or written back since: forget them
            self._dirty = list({id(kept): kept for kept in self._dirty if kept.dirty}.values())

    def drop(self, entry: CachedEntry) -> None:
        """Take ``entry``, which its home no longer holds, out without writing it."""
        entry.home, entry.dirty = None, False
        self._size -= 1
        if len(self._order) > 2 * self.capacity:
            self._order = deque(kept for kept in self._order if kept.home is not None)

    def flush(self) -> int:
        """Write every dirty entry to RocksDB in one batch; return how many were written."""
        dirty, self._dirty = self._dirty, []
        return self._write(entry for entry in dirty if entry.dirty)

    def flush_entries(self, entries: Iterable[CachedEntry]) -> int:
        """Write the dirty ones of ``entries`` in one batch (one key's map, before a scan)."""
        return self._write(entry for entry in entries if entry.dirty)

    def statistics(self) -> CacheStatistics:
        """Return the cache's size, dirty entries and what it read, evicted and wrote."""
        dirty = len({id(entry) for entry in self._dirty if entry.dirty})
        return CacheStatistics(
            self.capacity,
            self._size,
            dirty,
            self.loads,
            self._evictions,
            self._written,
            self._flushes,
        )

    def _write(self, entries: Iterable[CachedEntry]) -> int:
        batch = WriteBatch(raw_mode=True)
        for entry in entries:
            _stage(batch, entry)
        written = len(batch)
        if written:
            self._database.db.write(batch)
            self._written += written
            self._flushes += 1
        return written

    def _evict(self) -> None:
        # Down to capacity less an eighth (less one, for the entry being admitted).
        target = self.capacity - max(1, self.capacity // _EVICT_SHARE)
        batch = WriteBatch(raw_mode=True)
        order = self._order
        turns = 2 * len(order)  # one turn clears every ``used``, the next evicts
        while self._size > target and turns:
            turns -= 1
            entry = order.popleft()
            home = entry.home
            if home is None:
                continue
            if entry.used:
                entry.used = False
                order.append(entry)
                continue
            if entry.dirty:
                _stage(batch, entry)
            home.forget(entry)
            entry.home = None
            self._size -= 1
            self._evictions += 1
        written = len(batch)  # a written batch is consumed: count first
        if written:
            self._database.db.write(batch)
            self._written += written

    def __repr__(self) -> str:
        return f"<WriteBackCache {self._size}/{self.capacity} dirty~{len(self._dirty)}>"


def _stage(batch: WriteBatch, entry: CachedEntry) -> None:
    """Add ``entry``'s value (a delete for ``ABSENT``) to ``batch``; it is clean after."""
    entry.dirty = False
    if entry.value is ABSENT:
        batch.delete(entry.db_key)
        return
    assert entry.home is not None, "an entry that left the cache is never written"
    payload = entry.home.payload(entry.value)
    deadline = entry.deadline
    batch.put(entry.db_key, PLAIN + payload if deadline is None else stamped(payload, deadline))
