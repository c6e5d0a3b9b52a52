"""storage_for: the checkpoint storage a URL names.

===========================  ==============================================================
``None``, ``memory://``      ``MemoryCheckpointStorage`` (a new, empty one on every call)
``file:///abs/path``         ``FileSystemCheckpointStorage("/abs/path")``
``/abs/path``                the same
``s3://bucket/prefix``       ``S3CheckpointStorage("s3://bucket/prefix")`` (``s3`` extra)
===========================  ==============================================================

An ``s3://`` URL reaches the endpoint in ``LOCKGATE_S3_ENDPOINT``, else ``AWS_ENDPOINT_URL``,
else AWS; credentials and region come from the environment as for any AWS client. For other
options build ``S3CheckpointStorage`` yourself. aiobotocore is imported only for such a URL.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import SplitResult, unquote, urlsplit

from lockgate.engine.checkpointing.storage.checkpoint_storage import CheckpointStorage
from lockgate.engine.checkpointing.storage.filesystem import (
    FileSystemCheckpointStorage,
    FileSystemSavepointFolder,
)
from lockgate.engine.checkpointing.storage.memory import MemoryCheckpointStorage
from lockgate.engine.errors import UnsupportedCheckpointStorage

__all__ = ["savepoint_folder_for", "storage_for", "storage_reading"]


def savepoint_folder_for(url: str) -> CheckpointStorage:
    """Return a storage writing one savepoint's files straight into the folder ``url``.

    ``url`` is a ``file://`` URL, an absolute path or an ``s3://`` URL.

    Raises:
        ValueError: for ``memory://`` (a savepoint must outlive the process) or a URL
            ``storage_for`` refuses.
    """
    storage = storage_for(url)
    if isinstance(storage, FileSystemCheckpointStorage):
        return FileSystemSavepointFolder(storage.base_path)
    if isinstance(storage, MemoryCheckpointStorage):
        raise ValueError(
            f"savepoint target {url!r} is in memory, but a savepoint must outlive the job; "
            "give a file:///absolute/path or an s3://bucket/prefix"
        )
    from lockgate.engine.checkpointing.storage.s3 import S3CheckpointStorage, S3SavepointFolder

    assert isinstance(storage, S3CheckpointStorage)
    return S3SavepointFolder(storage.url)


def storage_reading(location: str) -> CheckpointStorage:
    """Return a storage that reads the checkpoint or savepoint at ``location``.

    ``location`` is a ``_metadata`` file or the folder holding it, as a path, ``file://``
    URL or ``s3://`` URL; every storage reads absolute locations wherever they point.
    """
    return storage_for(location.rstrip("/").rsplit("/", 1)[0] or "/")


def storage_for(url: str | None) -> CheckpointStorage:
    """Return the checkpoint storage ``url`` names (see the table in the module docstring).

    Raises:
        UnsupportedCheckpointStorage: for ``s3://`` URLs when the ``s3`` extra is missing.
        ValueError: for any other scheme, a relative path, or a ``file://`` URL with a host.
    """
    if url is None:
        return MemoryCheckpointStorage()
    parts = urlsplit(url)
    match parts.scheme:
        case "memory":
            return MemoryCheckpointStorage()
        case "file":
            return FileSystemCheckpointStorage(_file_path(url, parts))
        case "" if PurePosixPath(url).is_absolute():
            return FileSystemCheckpointStorage(url)
        case "s3" | "s3a":
            return _s3_storage(url)
        case "":
            raise ValueError(
                f"checkpoint storage {url!r} is a relative path; give an absolute path or a "
                "file:///absolute/path URL, so every process finds the same folder"
            )
        case scheme:
            raise ValueError(
                f"checkpoint storage {url!r} has the unknown scheme {scheme!r}; use memory://, "
                "file:///absolute/path, an absolute path or s3://bucket/prefix"
            )


def _s3_storage(url: str) -> CheckpointStorage:
    try:  # imported here: aiobotocore is an extra, and slow to import
        from lockgate.engine.checkpointing.storage.s3 import S3CheckpointStorage
    except ImportError as error:
        raise UnsupportedCheckpointStorage(
            f"checkpoint storage {url!r} needs S3 support from the 's3' extra "
            f"({error}); pip install 'lockgate[s3]', or use file:///absolute/path"
        ) from error
    return S3CheckpointStorage(url)


def _file_path(url: str, parts: SplitResult) -> str:
    if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
        raise ValueError(
            f"checkpoint storage {url!r} is not a local file URL; write file:///absolute/path "
            "(three slashes)"
        )
    return unquote(parts.path)
