"""Native keyed state restored at another parallelism, as files: Flink's rescaling of RocksDB.

For each new subtask, ``native_sources`` names the old subtask whose files become its
database (the largest overlap of key groups) and the others that hold some of its key
groups. Their files are downloaded (verified) into folders the job's state backend gives;
in a worker thread the backend deletes from the base's files the key groups the new subtask
does not own and inserts those it owns from the others' (``native_rescale``); the others'
folders are deleted after. The new subtask's keyed state backend then opens the base's
folder as it opens the files of a restore at an unchanged parallelism. When the old
snapshots cannot merge so (plain key groups among them, or a state stored in two layouts),
every one is read into key groups instead, as for any other backend.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

import anyio.to_thread

from lockgate.engine.checkpointing.native_state import NativeKeyedState
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.errors import CorruptCheckpoint, RestoreError
from lockgate.engine.restore.native import download, with_plain_keyed_state
from lockgate.engine.restore.redistribute import NativeSources, native_sources, redistribute
from lockgate.engine.state.backends import native_rescalable, native_rescale
from lockgate.engine.state.native_snapshot import NativeRestoreTarget

__all__ = ["redistribute_native"]


async def redistribute_native(
    old: Sequence[OperatorSnapshot],
    locations: Sequence[str],
    new_parallelism: int,
    max_parallelism: int,
    *,
    storage: CheckpointStorage,
    target: NativeRestoreTarget,
    into: list[OperatorSnapshot],
) -> None:
    """Fill ``into`` with one snapshot per new subtask of the state ``old`` snapshots held.

    ``old`` has one snapshot per old subtask (its native keyed state not downloaded), and
    ``locations`` the location of each one's file (for errors). The new snapshots' native
    keyed state is downloaded into folders of ``target`` (``native.folder``), merged for
    their key groups; ``into`` holds what is made as it is made, so that a failure leaves
    the folders to delete in it (``discard_downloads``).

    Raises:
        CorruptCheckpoint: naming the location of a file that cannot be read.
        RestoreError: the backend that wrote the files is not installed.
    """
    if not _mergeable(old, target):
        plain = [
            await with_plain_keyed_state(snapshot, storage, max_parallelism, location=location)
            for snapshot, location in zip(old, locations, strict=True)
        ]
        into.extend(redistribute(plain, new_parallelism, max_parallelism))
        return
    stripped = [replace(snapshot, native=None) for snapshot in old]
    into.extend(redistribute(stripped, new_parallelism, max_parallelism))
    holding = [_has_files(snapshot.native) for snapshot in old]
    for index, sources in enumerate(native_sources(holding, new_parallelism, max_parallelism)):
        native = await _merged(old, locations, sources, storage, target, max_parallelism)
        into[index] = replace(into[index], native=native)


def _mergeable(old: Sequence[OperatorSnapshot], target: NativeRestoreTarget) -> bool:
    natives = [snapshot.native for snapshot in old if snapshot.native is not None]
    backends = {native.backend for native in natives}
    if len(backends) != 1 or any(snapshot.keyed for snapshot in old):
        return False
    backend = backends.pop()
    probe = target.native_restore_folder(backend)  # None: the target cannot open them
    if probe is None:
        return False
    shutil.rmtree(probe, ignore_errors=True)
    try:
        return native_rescalable(backend, [native.description for native in natives])
    except (ImportError, ValueError):
        return False  # reading them into key groups says what is wrong


def _has_files(native: NativeKeyedState | None) -> bool:
    return native is not None and bool(native.files or native.inline)


async def _merged(
    old: Sequence[OperatorSnapshot],
    locations: Sequence[str],
    sources: NativeSources,
    storage: CheckpointStorage,
    target: NativeRestoreTarget,
    max_parallelism: int,
) -> NativeKeyedState | None:
    """The native keyed state of one new subtask, in a folder of ``target``'s; or ``None``."""
    if sources.base is None:
        return None
    base = old[sources.base].native
    assert base is not None, "a base holds files"
    folder = _folder(target, base.backend)
    others: list[Path] = []
    try:
        await download(base, storage, folder)
        for index in sources.others:
            others.append(_folder(target, base.backend))
            await download(_native(old[index]), storage, others[-1])
        described = [_native(old[index]).description for index in sources.others]
        merge = partial(
            native_rescale,
            base.backend,
            (folder, base.description),
            list(zip(others, described, strict=True)),
            sources.key_groups,
            max_parallelism,
        )
        description = await _in_thread(merge, locations[sources.base])
    except BaseException:
        await _delete(folder)
        raise
    finally:
        for other in others:
            await _delete(other)
    return replace(base, description=description, folder=folder)


async def _in_thread(merge: partial[dict[str, object]], location: str) -> dict[str, object]:
    try:
        return await anyio.to_thread.run_sync(merge)
    except ImportError as error:
        raise RestoreError(
            f"the state file {location} holds keyed state in a backend's own files, which "
            f"need its extra to be read ({error})"
        ) from error
    except Exception as error:
        raise CorruptCheckpoint(location, f"its files cannot be merged ({error!r})") from error


def _native(snapshot: OperatorSnapshot) -> NativeKeyedState:
    assert snapshot.native is not None, "the sources of a merge hold files"
    return snapshot.native


def _folder(target: NativeRestoreTarget, backend: str) -> Path:
    folder = target.native_restore_folder(backend)
    assert folder is not None, "a target that opens files gives folders for them"
    return folder


async def _delete(folder: Path) -> None:
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(partial(shutil.rmtree, folder, ignore_errors=True))
