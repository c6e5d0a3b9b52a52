"""FileSystemCheckpointStorage: checkpoints as files under a base folder.

Layout::

    <base>/<job>/chk-<id>/<name>        state files, one per operator subtask
    <base>/<job>/chk-<id>/_metadata     written last; the checkpoint exists once it is there

Metadata is written to a temporary file (``._metadata.<random>.tmp``), fsynced, renamed to
``_metadata`` with ``os.replace`` (atomic on POSIX), and the folders above it are fsynced,
so a crash leaves either no metadata or the whole of it. A checkpoint is discarded
metadata first, so a crash while discarding never leaves metadata pointing at missing
state. Every blocking call runs in a worker thread, so the event loop never waits on disk.

Locations are absolute paths, so another process can read a checkpoint knowing only its
location. To restore, pass ``read_metadata`` either the location ``write_metadata``
returned (``.../chk-<id>/_metadata``) or the checkpoint folder ``.../chk-<id>``.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from pathlib import Path

import anyio.to_thread

from lockgate.engine.checkpointing.checksum import checksum_of, verify_state
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.checkpointing.storage.checkpoint_storage import (
    missing_state_file,
    newest_readable,
)
from lockgate.engine.checkpointing.storage.layout import (
    METADATA_NAME,
    SHARED_FOLDER,
    check_job_name,
    check_state_name,
    checkpoint_folder,
    checkpoint_id_of,
    temporary_metadata_name,
)
from lockgate.engine.errors import CheckpointNotFound

__all__ = ["FileSystemCheckpointStorage", "FileSystemSavepointFolder"]

_FILE_SCHEME = "file://"


class FileSystemCheckpointStorage:
    """Stores checkpoints as files under ``base_path`` (made absolute when constructed).

    A folder ``chk-<id>`` is a checkpoint exactly when it holds ``_metadata``; folders
    without it (a crash, an abort) are ignored and removed by ``discard``. Files are fsynced
    before the metadata that refers to them is written.
    """

    def __init__(self, base_path: str | os.PathLike[str]) -> None:
        self.base_path = Path(base_path).absolute()

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        """Write ``data`` durably to ``<base>/<job>/chk-<id>/<name>``."""
        path = self._folder(job, checkpoint_id) / check_state_name(name)
        return await anyio.to_thread.run_sync(_write_state, path, data)

    async def read_state(self, handle: StateHandle) -> bytes:
        """Read the file at ``handle.location``, verified against its size and checksum."""
        return await anyio.to_thread.run_sync(_read_state, handle)

    async def write_shared(self, job: str, name: str, data: bytes) -> StateHandle:
        """Write ``data`` durably to ``<base>/<job>/shared/<name>``."""
        path = self.base_path / check_job_name(job) / SHARED_FOLDER / check_state_name(name)
        handle = await anyio.to_thread.run_sync(_write_state, path, data)
        return replace(handle, is_shared=True)

    async def discard_shared(self, handles: Iterable[StateHandle]) -> None:
        """Delete the shared files ``handles`` name."""
        paths = [Path(handle.location) for handle in handles]
        await anyio.to_thread.run_sync(_unlink_all, paths)

    async def write_metadata(self, metadata: CheckpointMetadata) -> str:
        """Write ``<base>/<job>/chk-<id>/_metadata`` atomically; return its absolute path."""
        folder = self._folder(metadata.job_name, metadata.checkpoint_id)
        path = folder / METADATA_NAME
        await anyio.to_thread.run_sync(_write_metadata, path, metadata, self.base_path)
        return str(path)

    async def read_metadata(self, location: str) -> CheckpointMetadata:
        """Read the metadata at ``location``, a ``_metadata`` file or a ``chk-<id>`` folder."""
        return await anyio.to_thread.run_sync(_read_metadata, _metadata_path(location))

    async def read_checkpoint(self, job: str, checkpoint_id: int) -> CheckpointMetadata:
        """Read the metadata in ``<base>/<job>/chk-<id>``."""
        folder = self.base_path / check_job_name(job) / checkpoint_folder(checkpoint_id)
        return await self.read_metadata(str(folder))

    async def latest(self, job: str, *, before: int | None = None) -> CheckpointMetadata | None:
        """Return the newest readable checkpoint of ``job`` (with an id below ``before``)."""
        return await newest_readable(
            await self.completed(job), partial(self.read_checkpoint, job), before=before
        )

    async def completed(self, job: str) -> list[int]:
        """Return the ids of ``job``'s checkpoint folders that hold metadata, ascending."""
        job_folder = self.base_path / check_job_name(job)
        return await anyio.to_thread.run_sync(_completed_ids, job_folder)

    async def discard(self, job: str, checkpoint_id: int) -> None:
        """Remove the folder ``chk-<id>`` and everything in it, metadata first."""
        await anyio.to_thread.run_sync(_discard, self._folder(job, checkpoint_id))

    def _folder(self, job: str, checkpoint_id: int) -> Path:
        return self.base_path / check_job_name(job) / checkpoint_folder(checkpoint_id)

    def __repr__(self) -> str:
        return f"FileSystemCheckpointStorage({str(self.base_path)!r})"


class FileSystemSavepointFolder(FileSystemCheckpointStorage):
    """One savepoint's folder: state files and ``_metadata`` go straight into ``base_path``.

    A savepoint is written by the job like a checkpoint, but lives in a folder of its own
    that its owner may move: its metadata names the files beside it relatively.
    """

    def _folder(self, job: str, checkpoint_id: int) -> Path:
        return self.base_path

    def __repr__(self) -> str:
        return f"FileSystemSavepointFolder({str(self.base_path)!r})"


def _write_state(path: Path, data: bytes) -> StateHandle:
    _write_durably(path, data)
    return StateHandle(str(path), len(data), checksum_of(data))


def _read_state(handle: StateHandle) -> bytes:
    try:
        data = Path(handle.location).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise missing_state_file(handle.location) from None
    return verify_state(handle, data)


def _write_metadata(path: Path, metadata: CheckpointMetadata, base_path: Path) -> None:
    temporary = path.with_name(temporary_metadata_name(uuid.uuid4().hex))
    try:
        _write_durably(temporary, metadata.to_bytes())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    for folder in (path.parent, path.parent.parent, base_path):
        _fsync_folder(folder)


def _read_metadata(path: Path) -> CheckpointMetadata:
    metadata = CheckpointMetadata.from_bytes(_read(path), location=str(path))
    return metadata.resolved(str(path.parent))


def _completed_ids(job_folder: Path) -> list[int]:
    if not job_folder.is_dir():
        return []
    ids = ((checkpoint_id_of(entry.name), entry) for entry in job_folder.iterdir())
    return sorted(
        checkpoint_id
        for checkpoint_id, entry in ids
        if checkpoint_id is not None and (entry / METADATA_NAME).is_file()
    )


def _discard(folder: Path) -> None:
    if not folder.exists():
        return
    (folder / METADATA_NAME).unlink(missing_ok=True)
    _fsync_folder(folder)
    shutil.rmtree(folder)


def _unlink_all(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _write_durably(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise CheckpointNotFound(
            f"no checkpoint file at {path}; pass the location write_metadata returned, or "
            "the checkpoint folder chk-<id>"
        ) from None


def _fsync_folder(folder: Path) -> None:
    # A rename or a new file is durable only once its folder's entry is flushed too.
    descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _metadata_path(location: str) -> Path:
    path = Path(location.removeprefix(_FILE_SCHEME))
    return path if path.name == METADATA_NAME else path / METADATA_NAME
