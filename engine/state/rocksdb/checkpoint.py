"""RocksDBCheckpointSnapshot: keyed state as a RocksDB checkpoint, for incremental checkpoints.

A RocksDB checkpoint (``rocksdict.Checkpoint``) flushes the memtables, then hard-links the
database's SST files into a new folder and copies the small files (MANIFEST, CURRENT,
OPTIONS): a database of its own, frozen at that instant. SST files never change once
written, so a checkpoint uploads only those the last completed one did not, and restores
open the files read-only and read them as ``RocksDBKeyedStateSnapshot`` reads a live one.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rocksdict import AccessType, Options, Rdict, ReadOptions

from lockgate.engine.state.native_snapshot import NativeFile
from lockgate.engine.state.rocksdb.frozen import FrozenWrites
from lockgate.engine.state.rocksdb.keys import state_id_bytes
from lockgate.engine.state.rocksdb.snapshot import RocksDBKeyedStateSnapshot, StateFormat

__all__ = ["RocksDBCheckpointSnapshot", "check_description", "formats_in", "key_groups_in"]

KeyGroups = dict[int, dict[str, dict[Any, Any]]]

_FORMAT = "lockgate-rocksdb-checkpoint"
_VERSION = 1
_SHAREABLE_SUFFIX = ".sst"


class RocksDBCheckpointSnapshot:
    """The keyed state of one subtask as a RocksDB checkpoint in the folder ``folder``.

    Invariant: the folder never changes until ``discard`` deletes it (the SST files are hard links
    of immutable files; the others are copies), so its files may be uploaded from a worker thread
    while the store goes on writing. ``folder`` is ``None`` for a store that never opened its
    database: no files, no entries. Taken by a store, it gets its folder when its window
    (``frozen``) closes: ``seal`` (the first call of ``files``, ``by_key_group`` or ``state_names``)
    writes back what only the cache held at the snapshot, then takes the RocksDB checkpoint
    (``rocksdb.frozen``). ``by_key_group`` opens the folder read-only and reads it as
    ``RocksDBKeyedStateSnapshot`` reads a live database, TTL included (``times`` are the clock times
    of the snapshot and of the store's last restore).
    """

    backend = "rocksdb"

    __slots__ = ("_formats", "_frozen", "_max_parallelism", "_times", "entries", "folder", "kinds")

    def __init__(
        self,
        folder: Path | None,
        formats: Mapping[bytes, StateFormat],
        *,
        max_parallelism: int,
        kinds: Mapping[str, str],
        entries: int = 0,
        times: tuple[float, float] = (0.0, 0.0),
        frozen: FrozenWrites[Path | None] | None = None,
    ) -> None:
        self.folder = folder
        self._frozen = frozen
        self._formats = dict(formats)
        self._max_parallelism = max_parallelism
        self._times = times
        self.kinds = dict(kinds)
        self.entries = entries

    @property
    def state_names(self) -> frozenset[str]:
        """The names of the states that hold at least one entry."""
        with self._view() as view:
            return view.state_names

    def by_key_group(self, max_parallelism: int) -> KeyGroups:
        """Return key group -> state name -> key -> plain value, as ``by_key_group`` does."""
        with self._view() as view:
            return view.by_key_group(max_parallelism)

    def seal(self) -> Path | None:
        """Return the folder, closing the window first if it is open (a worker's job).

        Raises:
            RuntimeError: the snapshot was discarded before.
        """
        if self._frozen is not None:
            self.folder, self._frozen = self._frozen.close(), None
        return self.folder

    def files(self) -> list[NativeFile]:
        """Every file of the checkpoint; the SST files are the shareable ones."""
        folder = self.seal()
        if folder is None:
            return []
        return [
            NativeFile(path.name, path.stat().st_size, path, path.suffix == _SHAREABLE_SUFFIX)
            for path in sorted(folder.iterdir())
        ]

    def description(self) -> dict[str, Any]:
        """The state formats, key groups and clock times ``key_groups_in`` needs."""
        time, restored_at = self._times
        return {
            "format": _FORMAT,
            "version": _VERSION,
            "max_parallelism": self._max_parallelism,
            "formats": {
                int.from_bytes(state_id, "big"): (state.name, state.kind, state.ttl)
                for state_id, state in self._formats.items()
            },
            "time": time,
            "restored_at": restored_at,
        }

    def discard(self) -> None:
        """Delete the checkpoint's folder (cancel its window if open); again does nothing."""
        if self._frozen is not None:
            self.folder, self._frozen = self._frozen.discard(), None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    @contextmanager
    def _view(self) -> Iterator[RocksDBKeyedStateSnapshot]:
        folder = self.seal()
        if folder is None:
            yield _snapshot(None, self.description())
        else:
            with _opened(folder, self.description()) as view:
                yield view

    def __repr__(self) -> str:
        names = sorted(state.name for state in self._formats.values())
        return f"<RocksDBCheckpointSnapshot states={names} folder={str(self.folder)!r}>"


def key_groups_in(folder: Path, description: Mapping[str, Any], max_parallelism: int) -> KeyGroups:
    """Return the plain key groups of the RocksDB checkpoint in ``folder``.

    ``description`` is what ``RocksDBCheckpointSnapshot.description`` returned for it; keys
    are grouped by ``max_parallelism``. A folder without files stands for an empty store.

    Raises:
        ValueError: ``description`` is not one this lockgate writes.
    """
    check_description(description)
    if not any(folder.iterdir()):
        return {}
    with _opened(folder, description) as view:
        return view.by_key_group(max_parallelism)


@contextmanager
def _opened(folder: Path, description: Mapping[str, Any]) -> Iterator[RocksDBKeyedStateSnapshot]:
    db = Rdict(str(folder), Options(raw_mode=True), access_type=AccessType.read_only())
    try:
        yield _snapshot(db, description)
    finally:
        db.close()


def formats_in(description: Mapping[str, Any]) -> dict[bytes, StateFormat]:
    """Return state id -> format of every state a checkpoint's ``description`` names."""
    return {
        state_id_bytes(state_id): StateFormat(name, kind, ttl)
        for state_id, (name, kind, ttl) in description["formats"].items()
    }


def check_description(description: Mapping[str, Any]) -> None:
    """Check that ``description`` is in the format this lockgate writes.

    Raises:
        ValueError: it is not.
    """
    if description.get("format") != _FORMAT or description.get("version") != _VERSION:
        raise ValueError(
            f"a RocksDB checkpoint described as {description.get('format')!r} version "
            f"{description.get('version')!r}; this lockgate reads {_FORMAT!r} version {_VERSION}"
        )


def _snapshot(db: Rdict | None, description: Mapping[str, Any]) -> RocksDBKeyedStateSnapshot:
    return RocksDBKeyedStateSnapshot(
        None if db is None else db.iter(ReadOptions()),
        formats_in(description),
        max_parallelism=description["max_parallelism"],
        kinds={},
        times=(description["time"], description["restored_at"]),
    )
