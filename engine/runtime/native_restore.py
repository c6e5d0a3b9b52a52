"""Turn a snapshot's native keyed state (RocksDB's files) back into plain key groups."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import anyio.to_thread

from lockgate.engine.checkpointing.errors import CorruptCheckpoint
from lockgate.engine.checkpointing.native_state import NativeKeyedState
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.errors import RestoreError
from lockgate.engine.state.native_snapshot import native_key_groups

__all__ = ["with_plain_keyed_state"]


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
        await _download(native, storage, Path(folder))
        keyed = await _read_key_groups(native, Path(folder), max_parallelism, location)
    return replace(snapshot, keyed=keyed, native=None)


async def _download(native: NativeKeyedState, storage: CheckpointStorage, folder: Path) -> None:
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
