"""Builds keyed state backends of either kind for the conformance tests, and closes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lockgate.engine.state import KeyedStateBackend, KeyedStateStore
from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore
from lockgate.engine.time.clock import Clock

BACKENDS = ("memory", "rocksdb")


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
            store = RocksDBKeyedStateStore(path, clock, owner=owner)
        self.made.append(store)
        return store

    def close_all(self) -> None:
        for store in self.made:
            store.close()
