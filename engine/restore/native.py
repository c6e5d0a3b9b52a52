"""Restore a snapshot's native keyed state (RocksDB's files): as key groups, or as files.

A restore at an unchanged key-group range into a backend that opens such files as they are
(``NativeRestoreTarget``) downloads them (``with_downloaded_keyed_state``) for the subtask's
keyed state backend to open; at another parallelism ``rescaled.py`` downloads and merges
them per new subtask; any other restore reads them into plain key groups
(``with_plain_keyed_state``), which every backend loads at any parallelism.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

import anyio.to_thread

from lockgate.engine.checkpointing.native_state import NativeKeyedState
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.errors import CorruptCheckpoint, RestoreError
from lockgate.engine.state import KeyedStateBackend
from lockgate.engine.state.backends import native_key_groups
from lockgate.engine.state.native_snapshot import NativeSnapshots

__all__ = [
    "discard_downloads",
    "download",
    "restore_keyed_state",
    "with_downloaded_keyed_state",
    "with_plain_keyed_state",
]


async def with_plain_keyed_state(
    snapshot: OperatorSnapshot, storage: CheckpointStorage, max_parallelism: int, *, location: str
) -> OperatorSnapshot:
    """Return ``snapshot`` with its native keyed state read into ``keyed``.

    The files are downloaded (and verified) into a temporary folder, which the backend opens
    read-only and reads as key group -> state -> key -> plain value, grouped by
    ``max_parallelism``; the folder is deleted after. So state a RocksDB incremental
    checkpoint stored restores into any backend, at any parallelism.

    Raises:
        RestoreError: the backend that wrote the files is not installed.
        CorruptCheckpoint: naming ``location``, when the files cannot be read.
    """
    native = snapshot.native
    if native is None:
        return snapshot
    with tempfile.TemporaryDirectory(prefix="lockgate-restore-") as folder:
        await download(native, storage, Path(folder))
        keyed = await _read_key_groups(native, Path(folder), max_parallelism, location)
    return replace(snapshot, keyed=keyed, native=None)


async def with_downloaded_keyed_state(
    snapshot: OperatorSnapshot, storage: CheckpointStorage, folder: Path
) -> OperatorSnapshot:
    """Return ``snapshot`` with the files of its native keyed state downloaded into ``folder``.

    Every file is verified against its size and checksum as it is read; ``native.folder``
    of the result is ``folder``, for the subtask's keyed state backend to open the files
    as they are (``NativeSnapshots.restore_native``), which then owns them. If a download
    fails, ``folder`` is deleted.

    Raises:
        CorruptCheckpoint: naming the location of a file that differs from what was written.
    """
    native = snapshot.native
    assert native is not None, "only native keyed state has files to download"
    try:
        await download(native, storage, folder)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(partial(shutil.rmtree, folder, ignore_errors=True))
        raise
    return replace(snapshot, native=replace(native, folder=folder))


def discard_downloads(restored: Mapping[str, Sequence[OperatorSnapshot]]) -> None:
    """Delete the folders of native files downloaded for ``restored`` that no backend took.

    A backend that opened them moved them away; the others (a deployment that failed before
    their operator was built) would stay on disk.
    """
    for snapshots in restored.values():
        for snapshot in snapshots:
            if snapshot.native is not None and snapshot.native.folder is not None:
                shutil.rmtree(snapshot.native.folder, ignore_errors=True)


def restore_keyed_state(store: KeyedStateBackend, restored: OperatorSnapshot) -> None:
    """Give a fresh keyed state backend the keyed state of ``restored``.

    Plain key groups are loaded; native keyed state that the restore downloaded
    (``native.folder``: files the backend opens as they are) is opened.

    Raises:
        RestoreError: native keyed state that was not downloaded, or a backend that cannot
            open it (the restore reads native state into key groups for such backends).
    """
    native = restored.native
    if native is None:
        store.restore(restored.keyed, restored.kinds)
    elif native.folder is not None and isinstance(store, NativeSnapshots):
        store.restore_native(native.folder, native.description, restored.kinds)
    else:
        raise RestoreError(
            f"operator '{restored.uid}' was given keyed state as {native.backend}'s files "
            f"that {type(store).__name__} cannot open (downloaded: {native.folder is not None}); "
            "restore it through load_restored_state, which reads them into key groups"
        )


async def download(native: NativeKeyedState, storage: CheckpointStorage, folder: Path) -> None:
    """Write every file of ``native`` into ``folder``, each verified as it is read.

    Raises:
        CorruptCheckpoint: naming the location of a file that differs from what was written.
    """
    for name, handle in native.files.items():
        data = await storage.read_state(handle)
        await anyio.to_thread.run_sync((folder / name).write_bytes, data)
    for name, data in native.inline.items():
        await anyio.to_thread.run_sync((folder / name).write_bytes, data)


async def _read_key_groups(
    native: NativeKeyedState, folder: Path, max_parallelism: int, location: str
) -> dict[int, dict[str, dict[object, object]]]:
    try:
        return await anyio.to_thread.run_sync(
            native_key_groups, native.backend, folder, native.description, max_parallelism
        )
    except ImportError as error:
        raise RestoreError(
            f"the state file {location} holds keyed state in {native.backend}'s own files, "
            f"which need its extra to be read ({error}); install it: "
            f"pip install 'lockgate[{native.backend}]'"
        ) from error
    except Exception as error:
        problem = f"its {native.backend} files cannot be read ({error!r})"
        raise CorruptCheckpoint(location, problem) from error
