"""FrozenWrites: what only the write-back cache held at a barrier, written back for one snapshot.

A snapshot of a RocksDB store needs RocksDB to hold everything, and at a barrier the
write-back cache holds the newest values of its dirty entries. Writing them back at the
barrier cost the synchronous part of every snapshot a pickle, a batch put and a write per
dirty entry (about 2.3 µs each, 47 ms with a full default cache). Instead the synchronous
part freezes them (``WriteBackCache.freeze``: a copy of the list of dirty entries) and opens
a window; closing it (``close``: encode their values, write them in one batch, then pin or
checkpoint RocksDB with ``capture``) is the asynchronous part's job, in a worker thread.

While a window is open the event loop never writes RocksDB (it reads it, and the cache
keeps every dirty entry), so RocksDB plus the frozen values are the state at the barrier
whenever the window closes. Anything on the event loop that must write RocksDB first closes
every open window itself (``WriteBackCache.settle``), in barrier order.

Copy on write keeps the frozen values exact: before the event loop changes an entry that
was dirty at the barrier, it encodes it and ``keep``s it. An entry's value and deadline
change only on the event loop, and only after it kept them, so whoever encodes an entry
first encodes its value at the barrier; both sides record it with ``dict.setdefault``,
atomic under the GIL, so the first record stays. If the worker encoded an entry the event
loop changed meanwhile (a torn read), the event loop's record came first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

from lockgate.engine.state.gil_share import sharing_the_gil
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


class Windows(Protocol):
    """What closes and cancels windows, one at a time and in barrier order (the cache)."""

    def close_through(self, frozen: FrozenWrites[Any]) -> None:
        """Close ``frozen`` and every window opened before it, in order."""

    def discard(self, frozen: FrozenWrites[T]) -> T | None:
        """Cancel ``frozen`` if still open; return what it captured if it was closed."""


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
