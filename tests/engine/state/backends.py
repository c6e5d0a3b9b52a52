"""Builds keyed state backends of either kind for the conformance tests, and closes them.

``"rocksdb-evicting"`` is RocksDB with a write-back cache of 2 entries: nearly every access
evicts, so each test also holds for values written back and read again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lockgate.engine.state import KeyedStateBackend, KeyedStateStore
from lockgate.engine.state.rocksdb.options import RocksDBOptions
from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore
from lockgate.engine.time.clock import Clock

BACKENDS = ("memory", "rocksdb", "rocksdb-evicting")
EVICTING = RocksDBOptions(cache_entries=2)


class Stores:
    """Makes new stores of one backend (RocksDB ones in folders under ``root``)."""

    def __init__(self, backend: str, root: Path) -> None:
        self.backend = backend
        self.root = root
        self.made: list[KeyedStateBackend] = []

    def new(self, clock: Clock | None = None, *, owner: str | None = None) -> Any:
        if self.backend == "memory":
            store: KeyedStateBackend = KeyedStateStore(clock, owner=owner)
        else:
            path = self.root / f"db{len(self.made)}"
            options = EVICTING if self.backend == "rocksdb-evicting" else None
            store = RocksDBKeyedStateStore(path, clock, owner=owner, options=options)
        self.made.append(store)
        return store

    def close_all(self) -> None:
        for store in self.made:
            store.close()
