"""NativeKeyedSnapshot: keyed state captured as a backend's own files (RocksDB's SST files).

Incremental checkpoints of the RocksDB backend upload files rather than key groups: a RocksDB
checkpoint hard-links the database's immutable SST files into a folder of its own, and only
the files no completed checkpoint uploaded yet go to storage. This module holds what the
runtime needs of such a snapshot, whatever the backend, and the two ways back: plain key
groups (``native_key_groups``), so that state stored natively restores into any backend at any
parallelism, and the files themselves, which a backend of the same kind opens as they are
(``NativeSnapshots.restore_native``, into a folder a ``NativeRestoreTarget`` gives): those of
one subtask when the key-group range is unchanged, or at another parallelism the files of
the old subtask that held most of the new one's key groups, made to hold exactly them
(``native_rescale``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeGuard, runtime_checkable

from lockgate.engine.state.backend import KeyedSnapshot

__all__ = [
    "NativeFile",
    "NativeKeyedSnapshot",
    "NativeRestoreTarget",
    "NativeSnapshots",
    "is_native",
]

KeyGroups = dict[int, dict[str, dict[Any, Any]]]


@dataclass(frozen=True, slots=True)
class NativeFile:
    """One file of a native snapshot, at ``path`` in the snapshot's local folder.

    A ``shareable`` file never changes once written (an SST file): a later checkpoint whose
    snapshot holds a file of the same name and size may reuse the copy an earlier checkpoint
    uploaded. The other files are small (RocksDB's MANIFEST, CURRENT, OPTIONS) and every
    checkpoint stores them whole.
    """

    name: str
    size: int
    path: Path
    shareable: bool


class NativeKeyedSnapshot(KeyedSnapshot, Protocol):
    """A keyed snapshot held as the files of a backend, in a local folder of its own.

    Invariant: the files never change until ``discard`` deletes them, so they may be read in
    worker threads while the backend goes on writing. ``description`` is what
    ``native_key_groups`` needs besides the files to read them back as plain key groups.
    """

    @property
    def backend(self) -> str:
        """The name of the backend whose files these are (``"rocksdb"``)."""

    def files(self) -> list[NativeFile]:
        """Every file of the snapshot (none for a backend that never stored anything)."""

    def description(self) -> dict[str, Any]:
        """Plain, picklable data that, with the files, gives back the key groups."""

    def discard(self) -> None:
        """Delete the local files; doing it again does nothing."""


@runtime_checkable
class _NativeFiles(Protocol):
    # Methods only: an isinstance check against a protocol with properties evaluates them,
    # and ``state_names`` of a RocksDB checkpoint opens the database.
    def files(self) -> list[NativeFile]: ...
    def description(self) -> dict[str, Any]: ...
    def discard(self) -> None: ...


def is_native(snapshot: object) -> TypeGuard[NativeKeyedSnapshot]:
    """Whether ``snapshot`` is a ``NativeKeyedSnapshot`` (told without reading its files)."""
    return isinstance(snapshot, _NativeFiles)


@runtime_checkable
class NativeSnapshots(Protocol):
    """A keyed state backend that captures its state as its own files and opens such files.

    RocksDB's: ``native_snapshot`` is a RocksDB checkpoint, and ``restore_native`` takes a
    RocksDB checkpoint's files as its database, without reading or writing its values again.
    """

    def native_snapshot(self) -> NativeKeyedSnapshot:
        """Capture every state as files: the synchronous part of an incremental checkpoint."""

    def restore_native(
        self,
        folder: Path,
        description: Mapping[str, Any],
        kinds: Mapping[str, str] | None = None,
    ) -> None:
        """Take the files in ``folder`` (a native snapshot's, of the same key groups) as state.

        Meant for a fresh backend. Once it returned, the files are the backend's own (moved
        out of ``folder``); ``description`` and ``kinds`` are the snapshot's.
        """


@runtime_checkable
class NativeRestoreTarget(Protocol):
    """A state backend whose keyed state backends open native snapshots' files as they are.

    A restore downloads such files into a folder ``native_restore_folder`` gives (at another
    parallelism, cut to the subtask's key groups there), and the subtask's keyed state
    backend opens them (``NativeSnapshots.restore_native``). Restores into other backends
    read them as plain key groups.
    """

    def native_restore_folder(self, backend: str) -> Path | None:
        """Return a new, empty folder for the files of a ``backend`` snapshot to restore.

        ``None`` if this backend's keyed state backends cannot open such files: the restore
        then reads them as key groups. The folder is on the file system of the databases.
        """
