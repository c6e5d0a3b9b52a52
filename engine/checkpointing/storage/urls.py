"""storage_for: the checkpoint storage a URL names.

===========================  ==============================================================
``None``, ``memory://``      ``MemoryCheckpointStorage`` (a new, empty one on every call)
``file:///abs/path``         ``FileSystemCheckpointStorage("/abs/path")``
``/abs/path``                the same
``s3://bucket/prefix``       not yet: S3 storage will come with the ``s3`` extra
===========================  ==============================================================
"""

from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import SplitResult, unquote, urlsplit

from lockgate.engine.checkpointing.errors import UnsupportedCheckpointStorage
from lockgate.engine.checkpointing.storage.checkpoint_storage import CheckpointStorage
from lockgate.engine.checkpointing.storage.filesystem import FileSystemCheckpointStorage
from lockgate.engine.checkpointing.storage.memory import MemoryCheckpointStorage

__all__ = ["storage_for"]


def storage_for(url: str | None) -> CheckpointStorage:
    """Return the checkpoint storage ``url`` names (see the table in the module docstring).

    Raises:
        UnsupportedCheckpointStorage: for ``s3://`` URLs, until the ``s3`` extra exists.
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
            raise UnsupportedCheckpointStorage(
                f"checkpoint storage {url!r} needs S3 support, which will come with the "
                "'s3' extra (pip install 'lockgate[s3]') in a later version; use "
                "file:///absolute/path for now"
            )
        case "":
            raise ValueError(
                f"checkpoint storage {url!r} is a relative path; give an absolute path or a "
                "file:///absolute/path URL, so every process finds the same folder"
            )
        case scheme:
            raise ValueError(
                f"checkpoint storage {url!r} has the unknown scheme {scheme!r}; use memory://, "
                "file:///absolute/path or an absolute path"
            )


def _file_path(url: str, parts: SplitResult) -> str:
    if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
        raise ValueError(
            f"checkpoint storage {url!r} is not a local file URL; write file:///absolute/path "
            "(three slashes)"
        )
    return unquote(parts.path)
