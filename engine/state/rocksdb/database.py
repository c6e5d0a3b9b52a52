"""StateDatabase: the RocksDB database behind one subtask's keyed state, in a folder of its own."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from rocksdict import (
    BlockBasedOptions,
    Checkpoint,
    DBCompactionStyle,
    Options,
    Rdict,
    RdictIter,
    ReadOptions,
    WriteOptions,
)

from lockgate.engine.state.rocksdb.options import RocksDBOptions

__all__ = ["Entry", "StateDatabase", "scan", "scan_view"]

Entry = tuple[bytes, bytes]

_BLOOM_BITS_PER_KEY = 10
_WRITE_BUFFER_BYTES = 16 << 20
_COMPACTION_STYLES = {"level": DBCompactionStyle.level, "universal": DBCompactionStyle.universal}


class StateDatabase:
    """A RocksDB database in the folder ``path``, opened on first use and deleted on close.

    Invariant: the folder holds only this database, and only while the database is open:
    opening refuses a folder that already holds one, and ``close`` deletes the folder. A
    restore may give it a database made elsewhere (``open_from``: a RocksDB checkpoint's
    files), which it then owns as its own.
    Writes skip RocksDB's write-ahead log, because a failed job restores its state from a
    checkpoint and never reopens a database. Keys and values are raw bytes. A subtask
    whose operator never keeps keyed state never opens its database, so costs nothing.
    RocksDB checkpoints (``checkpoint``) go to numbered folders beside it, under
    ``<path>-checkpoints``, which ``close`` deletes too. The database compacts as
    ``options`` says.
    """

    __slots__ = ("_checkpoints", "_closed", "_db", "options", "path")

    def __init__(
        self, path: str | os.PathLike[str], *, options: RocksDBOptions | None = None
    ) -> None:
        self.path = Path(path)
        self.options = RocksDBOptions() if options is None else options
        self._db: Rdict | None = None
        self._closed = False
        self._checkpoints = 0

    @property
    def is_open(self) -> bool:
        """Whether the database was opened and not closed yet."""
        return self._db is not None

    @property
    def db(self) -> Rdict:
        """The open database, opened now if it was not yet.

        Raises:
            RuntimeError: the database was closed.
        """
        if self._db is None:
            self._db = self._open()
        return self._db

    def open_from(self, folder: Path) -> Rdict:
        """Move the RocksDB database in ``folder`` to ``path``, open it there and return it.

        For a database never opened: it becomes the one in ``folder`` (a RocksDB checkpoint's
        files are one), whose folder is gone after, whether it opens or not.

        Raises:
            RuntimeError: the database was opened or closed before, or ``path`` exists.
        """
        if self._db is not None or self._closed or self.path.exists():
            raise RuntimeError(f"the state database at {self.path} is in use; it cannot restore")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(folder, self.path)  # a rename, unless the folders are on two file systems
        try:
            self._db = self._open(existing=True)
        except BaseException:
            shutil.rmtree(self.path, ignore_errors=True)
            raise
        return self._db

    def scan(self, start: bytes | None = None, end: bytes | None = None) -> Iterator[Entry]:
        """Yield the entries from ``start`` to ``end`` (exclusive); all of them by default."""
        return iter(()) if self._db is None else scan(self._db, start, end)

    def snapshot(self) -> RdictIter:
        """Return an iterator that sees the database as it is now, whatever is written later.

        A RocksDB iterator reads the version of the database current when it was created
        (O(1) to make; it keeps that version's memtables and files alive until dropped).
        It is not ``Rdict.snapshot()``: rocksdict 0.3 iterates such a snapshot over the
        live data.
        """
        return self.db.iter(ReadOptions())

    def snapshot_if_open(self) -> RdictIter | None:
        """Return ``snapshot()``, or ``None`` if the database was never opened."""
        return self.snapshot() if self._db is not None else None

    def checkpoint(self) -> Path | None:
        """Write a RocksDB checkpoint of the database to a new folder and return the folder.

        The memtables are flushed first (writes skip the write-ahead log, so the SST files
        must hold everything), then the SST files are hard-linked and the other files
        copied. ``None`` if the database was never opened: there is nothing to capture.
        """
        if self._db is None:
            return None
        self._checkpoints += 1
        folder = self.checkpoints_path / str(self._checkpoints)
        folder.parent.mkdir(exist_ok=True)
        Checkpoint(self._db).create_checkpoint(str(folder))
        return folder

    @property
    def checkpoints_path(self) -> Path:
        """The folder beside the database that holds its RocksDB checkpoints."""
        return self.path.with_name(f"{self.path.name}-checkpoints")

    def estimate_entries(self) -> int:
        """Return RocksDB's estimate of how many entries the database holds."""
        if self._db is None:
            return 0
        return self._db.property_int_value("rocksdb.estimate-num-keys") or 0

    def close(self) -> None:
        """Close the database and delete its folder; closing again does nothing.

        A snapshot still being read keeps the database's open files readable until it is
        dropped (the files are unlinked, not truncated).
        """
        db, self._db, self._closed = self._db, None, True
        if db is not None:
            db.close()
            shutil.rmtree(self.path, ignore_errors=True)
            shutil.rmtree(self.checkpoints_path, ignore_errors=True)

    def _open(self, *, existing: bool = False) -> Rdict:
        if self._closed:
            raise RuntimeError(f"the state database at {self.path} is closed")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = Rdict(str(self.path), _options(self.options, existing=existing))
        db.set_write_options(_write_options())
        return db

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open" if self._db is not None else "unopened"
        return f"<StateDatabase {state} {str(self.path)!r}>"


def scan(source: Rdict, start: bytes | None, end: bytes | None) -> Iterator[Entry]:
    """Yield the (key, value) pairs of ``source`` from ``start`` to ``end`` (exclusive)."""
    # A generator, so that ``bounds`` outlives the iterator: RocksDB keeps a pointer to the
    # upper bound, and rocksdict does not keep the bound alive (iterating past a freed bound
    # ends early or reads garbage).
    bounds = ReadOptions()
    if end is not None:
        bounds.set_iterate_upper_bound(end)
    entries: Iterator[Entry] = source.items(from_key=start, read_opt=bounds)  # type: ignore[assignment]
    yield from entries


def scan_view(view: RdictIter, start: bytes | None, end: bytes | None) -> Iterator[Entry]:
    """Yield the (key, value) pairs a ``snapshot`` view holds from ``start`` to ``end``."""
    if start is None:
        view.seek_to_first()
    else:
        view.seek(start)
    valid, key, value, advance = view.valid, view.key, view.value, view.next
    while valid():
        found = key()
        if end is not None and found >= end:
            return
        yield found, value()
        advance()


def _options(tuning: RocksDBOptions, *, existing: bool) -> Options:
    options = Options(raw_mode=True)
    # Only a restore opens files that exist (its own copies); no earlier database is reused.
    options.create_if_missing(create_if_missing=not existing)
    options.set_error_if_exists(enabled=not existing)
    table = BlockBasedOptions()
    table.set_bloom_filter(_BLOOM_BITS_PER_KEY, block_based=False)  # absent keys skip files
    options.set_block_based_table_factory(table)
    # Keyed state overwrites the same keys again and again: smaller memtables hold fewer old
    # versions to skip (bench/state_backends.py: faster than RocksDB's default for a running
    # sum; the benchmarks page of the docs has the figure).
    options.set_write_buffer_size(_WRITE_BUFFER_BYTES)
    options.set_compaction_style(_COMPACTION_STYLES[tuning.compaction_style]())
    options.set_level_zero_file_num_compaction_trigger(tuning.level0_compaction_trigger)
    options.set_level_zero_slowdown_writes_trigger(tuning.level0_slowdown_writes_trigger)
    options.set_level_zero_stop_writes_trigger(tuning.level0_stop_writes_trigger)
    return options


def _write_options() -> WriteOptions:
    options = WriteOptions()
    # The stub declares a method, but rocksdict exposes a property.
    options.disable_wal = True  # type: ignore[method-assign, assignment]
    return options
