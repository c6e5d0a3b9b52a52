"""WriteBackCache: a bounded cache of hot keys' values in front of one subtask's RocksDB database.

Every state handle of a RocksDB store reads and writes through this cache. An entry holds a
key's value as a Python object (a value, a list, an accumulator, a map's one user value; or
``ABSENT``: known to hold nothing) with its RocksDB key, encoded once when the entry was
made, so a read of a cached key touches neither RocksDB nor pickle, and a write only marks
the entry dirty. Dirty entries reach RocksDB in one ``WriteBatch`` when they are evicted and
when the store flushes (before every scan of the database), and for a snapshot: ``freeze``
opens a window at its barrier, which a worker thread closes, writing them then
(``rocksdb.frozen``); until then they are copied on write.

Eviction is a second-chance (clock) sweep in the order entries were made: an entry read
again since the sweep last passed it goes round once more, the others leave, so hot keys
stay, and keys that pass through once (a record reads and writes its key) leave without
costing the sweep a round. A full cache evicts an eighth of its entries at once (one
batch for their writes).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from rocksdict import WriteBatch

from lockgate.engine.state.rocksdb.database import StateDatabase
from lockgate.engine.state.rocksdb.frozen import FrozenWrites, Windows
from lockgate.engine.state.rocksdb.values import ABSENT, stored

__all__ = ["ABSENT", "CacheHome", "CacheStatistics", "CachedEntry", "WriteBackCache"]

T = TypeVar("T")

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
    ``dirty`` is the cache's epoch when it was last marked dirty (0: never since it was
    written; the cache tells whether RocksDB holds ``value`` from it); ``used`` says it was
    used since the eviction sweep last passed it. ``home`` is ``None`` once the entry left
    the cache.
    """

    __slots__ = ("db_key", "deadline", "dirty", "home", "key", "listed", "used", "value")

    def __init__(
        self, home: CacheHome, key: Any, db_key: bytes, value: Any, deadline: float | None
    ) -> None:
        self.home: CacheHome | None = home
        self.key = key
        self.db_key = db_key
        self.value = value
        self.deadline = deadline
        self.dirty = 0
        self.listed = False  # in the cache's list of dirty entries
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
        kept: entries encoded on the event loop for a snapshot's open window, because they
            were about to change before its asynchronous part encoded them (copy on write).
        listed: entries in the list of dirty ones (some clean since), which a snapshot
            copies at its barrier.
    """

    capacity: int
    entries: int
    dirty: int
    loads: int
    evictions: int
    written: int
    flushes: int
    kept: int = 0
    listed: int = 0


class WriteBackCache:
    """At most ``capacity`` entries of one store's states, written back to RocksDB in batches.

    Invariant: RocksDB plus the dirty entries hold every state exactly: an entry leaves the
    cache only after its value was written (or, ``drop``, once RocksDB needs it no more), and
    ``flush`` leaves no entry dirty. An entry is dirty while its ``dirty`` epoch is above
    the last epoch a closed window wrote back (``Windows.clean_through``); every dirty entry is in
    ``_dirty``, once (``listed``), with clean ones until it grows to twice ``capacity``.

    Snapshots (``freeze``) open windows that a worker thread closes (``rocksdb.frozen``).
    While one is open the event loop writes nothing to RocksDB: nothing is evicted, and
    what must write (``flush``, ``flush_entries``, ``drop``, a state's own writes through
    ``settle``) closes every open window first. So the cache may hold up to twice
    ``capacity`` entries while a window is open; otherwise at most ``capacity`` (at least
    1), or, just after a window, an eighth less on each admission until it does.
    ``mark_dirty`` comes before an entry changes, so that it can keep its old value for
    the windows that still need it.
    """

    __slots__ = (
        "_database",
        "_dirty",
        "_evictions",
        "_flushes",
        "_order",
        "_size",
        "_windows",
        "_written",
        "capacity",
        "epoch",
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
        self.epoch = 1  # entries marked dirty now get it; ``freeze`` starts the next one
        self._windows = Windows(database)  # snapshots' open windows

    def admit(self, entry: CachedEntry) -> None:
        """Count ``entry``, which its home holds from now on; first evict if the cache is full.

        ``entry`` itself is never evicted here, so its caller may still change it. While a
        window is open nothing is evicted, up to twice ``capacity``.
        """
        if self._size >= self.capacity and self._may_evict():
            self._evict()
        self._order.append(entry)
        self._size += 1

    def mark_dirty(self, entry: CachedEntry) -> None:
        """Remember that RocksDB will not hold ``entry``'s value: call it before changing it.

        Needed once per epoch: callers skip it while ``entry.dirty == epoch``. An entry
        dirty since before an open window's barrier keeps its value for the window first.
        """
        if entry.dirty <= self._windows.clean_through:
            entry.dirty = self.epoch
            if not entry.listed:
                entry.listed = True
                self._dirty.append(entry)
                if len(self._dirty) > 2 * self.capacity:
                    self._compact()
            return
        if self._windows.listed:
            self._windows.keep(entry)  # it skips the windows closed meanwhile
        entry.dirty = self.epoch

    def freeze(self, capture: Callable[[], T]) -> FrozenWrites[T]:
        """Open a window for a snapshot at this barrier: its synchronous part.

        A copy of the list of dirty entries, nothing encoded; closing it writes them and
        returns ``capture()`` (see ``rocksdb.frozen``). The entries stay dirty here until then.
        """
        frozen = self._windows.open(self._dirty.copy(), self.epoch, capture)
        self.epoch += 1
        return frozen

    def settle(self) -> None:
        """Close every open window, on this thread, unless a closer does it: before a write."""
        self._windows.settle()

    def drop(self, entry: CachedEntry) -> None:
        """Take ``entry``, which its home no longer holds, out without writing it."""
        self.settle()  # an open window would write it back after whatever comes next
        entry.home, entry.dirty = None, 0
        self._size -= 1
        if len(self._order) > 2 * self.capacity:
            self._order = deque(kept for kept in self._order if kept.home is not None)

    def flush(self) -> int:
        """Write every dirty entry to RocksDB in one batch; return how many were written."""
        self.settle()
        dirty, self._dirty = self._dirty, []
        for entry in dirty:
            entry.listed = False
        return self._write(dirty)

    def flush_entries(self, entries: Iterable[CachedEntry]) -> int:
        """Write the dirty ones of ``entries`` in one batch (one key's map, before a scan)."""
        dirty = [entry for entry in entries if self._is_dirty(entry)]
        if dirty:
            self.settle()
        return self._write(dirty)

    def close(self) -> None:
        """Close the windows still open (their snapshots survive the database's close)."""
        self.settle()

    def statistics(self) -> CacheStatistics:
        """Return the cache's size, dirty entries and what it read, evicted and wrote."""
        dirty = sum(1 for entry in self._dirty if self._is_dirty(entry))
        return CacheStatistics(
            self.capacity,
            self._size,
            dirty,
            self.loads,
            self._evictions,
            self._written + self._windows.written,
            self._flushes,
            self._windows.kept,
            len(self._dirty),
        )

    def _is_dirty(self, entry: CachedEntry) -> bool:
        return entry.dirty > self._windows.clean_through

    def _may_evict(self) -> bool:
        if not self._windows.any_open:
            return True
        if self._size < 2 * self.capacity:
            return False
        self.settle()  # too many entries to wait for the worker: close them here
        return True

    def _compact(self) -> None:
        """Forget the listed entries that are clean (written back, evicted, dropped)."""
        clean_through, listed = self._windows.clean_through, []
        for entry in self._dirty:
            if entry.dirty > clean_through:
                listed.append(entry)
            else:
                entry.listed = False
        self._dirty = listed

    def _write(self, entries: Iterable[CachedEntry]) -> int:
        batch = WriteBatch(raw_mode=True)
        for entry in entries:
            if self._is_dirty(entry):
                _stage(batch, entry)
        written = len(batch)
        if written:
            self._database.db.write(batch)
            self._written += written
            self._flushes += 1
        return written

    def _evict(self) -> None:
        # An eighth of the entries at a time (less one, for the entry being admitted).
        target = self._size - max(1, self.capacity // _EVICT_SHARE)
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
            if self._is_dirty(entry):
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
        size = f"{self._size}/{self.capacity}"
        return f"<WriteBackCache {size} dirty~{len(self._dirty)} {self._windows!r}>"


def _stage(batch: WriteBatch, entry: CachedEntry) -> None:
    """Add ``entry``'s value (a delete for ``ABSENT``) to ``batch``; it is clean after."""
    value = _stored(entry)
    entry.dirty = 0
    if value is None:
        batch.delete(entry.db_key)
    else:
        batch.put(entry.db_key, value)


def _stored(entry: CachedEntry) -> bytes | None:
    """What RocksDB stores for ``entry``'s value now (``None``: a delete)."""
    if entry.value is ABSENT:
        return None
    assert entry.home is not None, "an entry that left the cache is never written"
    return stored(entry.value, entry.deadline, entry.home.payload)
