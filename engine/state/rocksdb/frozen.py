"""FrozenWrites and Windows: what only the write-back cache held at a barrier, for a snapshot.

A snapshot of a RocksDB store needs RocksDB to hold everything, and at a barrier the
write-back cache holds the newest values of its dirty entries. Writing them back at the
barrier cost the synchronous part of every snapshot a pickle, a batch put and a write per
dirty entry (about 2.3 µs each, 47 ms with a full default cache). Instead the synchronous
part freezes them (``WriteBackCache.freeze``: a copy of the list of dirty entries) and opens
a window; closing it (``close``: encode their values, write them in one batch, then pin or
checkpoint RocksDB with ``capture``) is the asynchronous part's job, in a worker thread.

While a window is open the event loop never writes RocksDB (it reads it, and the cache
keeps every dirty entry), so RocksDB plus the frozen values are the state at the barrier
whenever the window closes. ``Windows`` closes them one at a time, each after those opened
before it. Anything on the event loop that must write RocksDB first closes every open
window itself (``Windows.settle``).

Copy on write keeps the frozen values exact: before the event loop changes an entry that
was dirty at the barrier, it encodes it and ``keep``s it. An entry's value and deadline
change only on the event loop, and only after it kept them, so whoever encodes an entry
first encodes its value at the barrier; both sides record it with ``dict.setdefault``,
atomic under the GIL, so the first record stays. If the worker encoded an entry the event
loop changed meanwhile (a torn read), the event loop's record came first.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

from rocksdict import WriteBatch

from lockgate.engine.state.gil_share import sharing_the_gil
from lockgate.engine.state.rocksdb.database import StateDatabase
from lockgate.engine.state.rocksdb.values import stored

__all__ = ["FrozenEntry", "FrozenWrites", "Windows"]

T = TypeVar("T")

_KEPT: Any = object()


class _Home(Protocol):
    def payload(self, value: Any) -> bytes:
        """Return the stored payload of a value (without its header)."""


class FrozenEntry(Protocol):
    """What ``FrozenWrites`` reads of a cached entry (``CachedEntry``)."""

    db_key: bytes
    value: Any
    deadline: float | None
    dirty: int

    @property
    def home(self) -> _Home | None:
        """What holds the entry and encodes its value; ``None`` once it left the cache."""


class FrozenWrites(Generic[T]):
    """The entries dirty at one barrier, and what ``capture`` took once they were written.

    Invariant: an entry was dirty at the freeze if its ``dirty`` epoch lies in
    ``(floor, epoch]`` (``holds``); ``encode`` returns the RocksDB key of each such entry
    mapped to the bytes its value and deadline of that instant are stored as (``None``: a
    delete), whatever the event loop did since. ``members`` may hold entries that were
    clean at the freeze, and some twice: they are skipped. Once closed (``closed``) it holds
    ``capture``'s result, or nothing if ``cancel`` came first. ``close`` and ``discard``
    ask ``windows`` (the cache) to close it, and every window before it, or to cancel it.
    """

    __slots__ = (
        "__weakref__",
        "_captured",
        "_members",
        "_stored",
        "_windows",
        "cancelled",
        "capture",
        "closed",
        "epoch",
        "floor",
    )

    def __init__(
        self,
        members: Sequence[FrozenEntry],
        *,
        epoch: int,
        floor: int,
        capture: Callable[[], T],
        windows: Windows,
    ) -> None:
        self.epoch = epoch
        self.floor = floor
        self.capture = capture
        self.closed = False
        self.cancelled = False
        self._windows = windows
        self._members = members
        self._stored: dict[bytes, bytes | None] = {}
        self._captured: Any = None

    @property
    def size(self) -> int:
        """An upper bound of the entries it holds (those listed as dirty at the freeze)."""
        return len(self._members)

    def holds(self, entry: FrozenEntry) -> bool:
        """Whether ``entry`` was dirty at the freeze and has not been changed since."""
        return self.floor < entry.dirty <= self.epoch

    def keep(self, db_key: bytes, value: bytes | None) -> bool:
        """Record an entry's stored bytes at the freeze, unless recorded; whether it was new.

        Called on the event loop before it changes an entry that ``holds``.
        """
        if self.closed or db_key in self._stored:
            return False
        self._stored.setdefault(db_key, value)  # the closer may have come first meanwhile
        return True

    def encode(self) -> Mapping[bytes, bytes | None]:
        """Encode every entry not kept yet; return RocksDB key -> stored bytes (see above).

        For the closer (the GIL is released every thousand entries).
        """
        record = self._stored.setdefault
        for entry in sharing_the_gil(self._members):
            if entry.db_key not in self._stored and self.holds(entry):
                encoded = _encoded(entry, self._stored)
                if encoded is not _KEPT:
                    record(entry.db_key, encoded)
        return self._stored

    def close(self) -> T:
        """Close the window (once, wherever it is asked first) and return what was captured.

        Raises:
            RuntimeError: it was cancelled (the snapshot was discarded first).
        """
        if not self.closed:
            self._windows.close_through(self)
        if self.cancelled:
            raise RuntimeError(f"{self!r} was cancelled: its snapshot was discarded")
        return self._captured  # type: ignore[no-any-return]

    def discard(self) -> T | None:
        """Cancel the window if it is open; return what it captured if it was closed first."""
        return self._windows.discard(self)

    def finish(self, captured: T) -> None:
        """Mark it closed with ``captured`` (by the closer, once its entries are written)."""
        self._captured = captured
        self._release()

    def cancel(self) -> T | None:
        """Mark it closed without writing anything (by the closer); return any capture."""
        if not self.closed:
            self.cancelled = True
            self._release()
        return None if self.cancelled else self._captured

    def _release(self) -> None:
        self._stored = {}
        self._members = ()
        self.closed = True

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled else "closed" if self.closed else "open"
        return f"<FrozenWrites epoch={self.epoch} {state} entries~{self.size}>"


def _encoded(entry: FrozenEntry, kept: Mapping[bytes, bytes | None]) -> Any:
    """Return what ``entry`` is stored as, or ``_KEPT`` if the event loop kept it meanwhile."""
    home, value, deadline = entry.home, entry.value, entry.deadline
    if home is None:  # it left the cache since ``holds`` looked: kept before it left
        return _KEPT
    try:
        return stored(value, deadline, home.payload)
    except Exception:
        if entry.db_key in kept:  # changed while it was being encoded: kept before
            return _KEPT
        raise


class Windows:
    """The open windows of one write-back cache, closed one at a time, in barrier order.

    Invariant: ``clean_through`` is the epoch of the last window closed (0: none): an entry
    marked dirty in an epoch up to it, and not since, is written back. Closing a window
    closes every window opened before it first, so RocksDB goes through the barriers'
    states in order. Only the event loop opens windows and prunes the tuple of open ones;
    closers, in any thread, read it and hold ``_closing``.
    """

    __slots__ = ("_closing", "_database", "_open", "clean_through", "kept", "written")

    def __init__(self, database: StateDatabase) -> None:
        self._database = database
        self.clean_through = 0
        self.kept = 0  # entries the event loop encoded for a window before changing them
        self.written = 0  # entries windows wrote back, in the threads that closed them
        self._open: tuple[weakref.ref[FrozenWrites[Any]], ...] = ()
        self._closing = threading.Lock()

    def open(
        self, members: Sequence[FrozenEntry], epoch: int, capture: Callable[[], T]
    ) -> FrozenWrites[T]:
        """Open a window at the barrier that ends ``epoch``, for ``members`` (on the event loop)."""
        frozen = FrozenWrites(
            members, epoch=epoch, floor=self.clean_through, capture=capture, windows=self
        )
        self._open = (*self._pruned(), weakref.ref(frozen))
        return frozen

    @property
    def any_open(self) -> bool:
        """Whether a window is open (on the event loop; it forgets closed and dropped ones)."""
        return bool(self._pruned())

    @property
    def listed(self) -> bool:
        """Whether a window may be open (some were opened and not found closed since)."""
        return bool(self._open)

    def keep(self, entry: FrozenEntry) -> None:
        """Give ``entry``'s stored bytes to the open windows that hold it, before it changes.

        On the event loop; once it finds every window closed, it forgets them.
        """
        value: Any = _KEPT
        still_open = False
        for ref in self._open:
            frozen = ref()
            if frozen is None or frozen.closed:
                continue
            still_open = True
            if not frozen.holds(entry):
                continue
            if value is _KEPT:
                home = entry.home
                assert home is not None, "an entry an open window holds stays cached"
                value = stored(entry.value, entry.deadline, home.payload)
            self.kept += frozen.keep(entry.db_key, value)
        if not still_open:
            self._open = ()

    def settle(self) -> None:
        """Close every open window here, waiting for one a closer is closing: before a write.

        Called on the event loop before it writes RocksDB itself.
        """
        if self._pruned():
            with self._closing:
                for frozen in self._alive():
                    self._close(frozen)
            self._open = ()

    def close_through(self, frozen: FrozenWrites[Any]) -> None:
        """Close ``frozen`` and every window opened before it, in order (in any thread)."""
        with self._closing:
            for earlier in self._alive():
                if earlier.epoch > frozen.epoch:
                    break
                self._close(earlier)

    def discard(self, frozen: FrozenWrites[T]) -> T | None:
        """Cancel ``frozen`` if it is open; return what it captured if it was closed before."""
        with self._closing:
            return frozen.cancel()

    def _close(self, frozen: FrozenWrites[Any]) -> None:
        """Write ``frozen``'s entries in one batch, then capture RocksDB; they are clean."""
        if frozen.closed:
            return
        frozen.floor = max(frozen.floor, self.clean_through)  # written by an earlier window
        batch = WriteBatch(raw_mode=True)
        for db_key, value in frozen.encode().items():
            if value is None:
                batch.delete(db_key)
            else:
                batch.put(db_key, value)
        written = len(batch)  # a written batch is consumed: count first
        if written:
            self._database.db.write(batch)
            self.written += written
        frozen.finish(frozen.capture())
        self.clean_through = max(self.clean_through, frozen.epoch)

    def _pruned(self) -> tuple[weakref.ref[FrozenWrites[Any]], ...]:
        if self._open:
            self._open = tuple(ref for ref in self._open if _is_open(ref))
        return self._open

    def _alive(self) -> list[FrozenWrites[Any]]:
        return [frozen for ref in self._open if (frozen := ref()) is not None]

    def __repr__(self) -> str:
        return f"<Windows open={len(self._open)} clean_through={self.clean_through}>"


def _is_open(ref: weakref.ref[FrozenWrites[Any]]) -> bool:
    frozen = ref()
    return frozen is not None and not frozen.closed
