"""StateAccess: where one state's entries lie in RocksDB, read there when they are not cached."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

from rocksdict import Rdict, WriteBatch

from lockgate.engine.state.rocksdb.database import Entry, scan
from lockgate.engine.state.rocksdb.keys import KeyCodec, prefix_end
from lockgate.engine.state.rocksdb.values import split, stamped
from lockgate.engine.state.ttl import StateTtlConfig, TtlPolicy
from lockgate.engine.time.clock import Clock

__all__ = ["RestoreScope", "StateAccess"]

_NO_KEY: Any = object()


class RestoreScope(Protocol):
    """The key state handles work on now, and when state was last restored (for TTLs)."""

    @property
    def current_key(self) -> Any:
        """The key of the record being processed."""

    @property
    def restored_at(self) -> float:
        """The clock time of the last restore (0.0 if none)."""


class StateAccess:
    """The RocksDB entries of one state: their keys, point reads, and scans with the TTL.

    The write-back cache (``cache``, ``entries``) reads a key it does not hold with ``get``
    and writes values back itself. A scan (a map's entries) reads RocksDB directly, after
    the cache wrote back what the scan covers: ``checked`` never returns an expired value
    and deletes it, and refreshes the deadline of the others when the TTL says reads do.
    Values restored without a deadline expire ``ttl`` after the restore. Every write calls
    ``settle`` first (the cache's: no snapshot's window may be open while the event loop
    writes RocksDB).
    """

    __slots__ = ("_db", "_last", "_locate", "_policy", "_scope", "_settle", "_ttl", "state_id")

    def __init__(
        self,
        scope: RestoreScope,
        db: Rdict,
        codec: KeyCodec,
        state_id: bytes,
        ttl: StateTtlConfig | None,
        clock: Clock,
        settle: Callable[[], None],
    ) -> None:
        self._scope = scope
        self._settle = settle
        self._db = db
        self._locate = codec.locate
        self._last: tuple[Any, bytes] = (_NO_KEY, b"")  # a key and its RocksDB key
        self.state_id = state_id
        self._policy = None if ttl is None else TtlPolicy(ttl, clock)
        self._ttl = 0.0 if ttl is None else ttl.ttl

    def key(self) -> bytes:
        """Return the RocksDB key (or, for a map, the key prefix) of the current key."""
        return self.key_of(self._scope.current_key)

    def key_of(self, key: Any) -> bytes:
        """Return the RocksDB key (or, for a map, the key prefix) of ``key``."""
        last_key, db_key = self._last
        if key is not last_key:  # a read and a write of one record share the encoding
            group, frame = self._locate(key)
            db_key = group + self.state_id + frame
            self._last = (key, db_key)
        return db_key

    def get(self, db_key: bytes) -> bytes | None:
        """Return what RocksDB stores under ``db_key`` (header and payload), or None."""
        stored: bytes | None = self._db.get(db_key)
        return stored

    def get_many(self, db_keys: list[bytes]) -> list[bytes | None]:
        """Return what RocksDB stores under each of ``db_keys`` (one multi-get), or None."""
        stored: list[bytes | None] = self._db.get(db_keys)  # type: ignore[arg-type, assignment]
        return stored

    def checked(self, db_key: bytes, stored: bytes) -> bytes | None:
        """Return the payload of a scanned entry if live (refreshed if reads refresh)."""
        return stored[1:] if self._policy is None else self._checked(db_key, stored, refresh=True)

    def scan(self, prefix: bytes) -> Iterator[Entry]:
        """Yield every (key, stored value) whose key starts with ``prefix``, in key order."""
        return scan(self._db, prefix, prefix_end(prefix))

    def apply(self, batch: WriteBatch) -> None:
        """Write ``batch`` atomically."""
        self._settle()
        self._db.write(batch)

    def _checked(self, db_key: bytes, stored: bytes, *, refresh: bool) -> bytes | None:
        assert self._policy is not None
        deadline, payload = split(stored)
        if deadline is None:  # restored: it lives a full ttl from the restore
            deadline = self._scope.restored_at + self._ttl
        if deadline <= self._policy.now():
            self._settle()
            self._db.delete(db_key)
            return None
        if refresh and self._policy.refreshes_on_read:
            self._settle()
            self._db[db_key] = stamped(payload, self._policy.deadline())
        return payload

    def __repr__(self) -> str:
        return f"<StateAccess state_id={self.state_id.hex()} ttl={self._policy is not None}>"
