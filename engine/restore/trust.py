"""Which snapshots a restore may unpickle: the job's own checkpoints, and nothing else.

Checkpoint state files are pickled, and unpickling runs code. A checkpoint in the job's own
checkpoint storage was written there by the engine, for this job; any other folder could
hold anything, and its metadata proves nothing (its checksum is one anyone can compute, and
``is_savepoint`` is whatever the file says). So what may be unpickled is decided from where
the files are, never from what the metadata says about them.
"""

from __future__ import annotations

import os.path
from urllib.parse import unquote, urlsplit

from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.checkpointing.storage import (
    CheckpointStorage,
    FileSystemCheckpointStorage,
    MemoryCheckpointStorage,
)

__all__ = ["holds_every_file", "is_in_storage"]


def is_in_storage(storage: CheckpointStorage, location: str) -> bool:
    """Whether ``location`` lies inside ``storage``: under its folder, bucket prefix or memory.

    Locations are compared as normalised paths, so ``..`` cannot lead out of the storage. A
    storage of a kind this function does not know holds nothing.
    """
    if isinstance(storage, MemoryCheckpointStorage):
        return location.startswith("memory://")
    if isinstance(storage, FileSystemCheckpointStorage):
        return _is_under(_file_path(location), str(storage.base_path))
    url = getattr(storage, "url", None)  # S3CheckpointStorage, without importing aiobotocore
    if isinstance(url, str) and url.startswith("s3://"):
        return _is_under_s3(location, url)
    return False


def holds_every_file(storage: CheckpointStorage, metadata: CheckpointMetadata) -> bool:
    """Whether every state file ``metadata`` names (shared ones too) is inside ``storage``."""
    return all(
        is_in_storage(storage, handle.location)
        for operator in metadata.operators.values()
        for subtask in operator.handles
        if subtask is not None
        for handle in (subtask, *subtask.shared)
    )


def _file_path(location: str) -> str | None:
    parts = urlsplit(location)
    if parts.scheme == "file" and parts.netloc in ("", "localhost"):
        return unquote(parts.path)
    return location if not parts.scheme and os.path.isabs(location) else None


def _is_under(path: str | None, folder: str) -> bool:
    if path is None:
        return False
    path, folder = os.path.normpath(path), os.path.normpath(folder)
    return os.path.commonpath((path, folder)) == folder


def _is_under_s3(location: str, storage_url: str) -> bool:
    location = location.replace("s3a://", "s3://", 1)
    if not location.startswith("s3://"):
        return False
    key = location.removeprefix("s3://")
    return _is_under("/" + key, "/" + storage_url.removeprefix("s3://").rstrip("/"))
