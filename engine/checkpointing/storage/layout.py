"""How checkpoints are laid out in storage: ``<job>/chk-<id>/<name>``, ``_metadata``, ``_lock``.

Every storage uses the same names, so a checkpoint folder looks the same wherever it lives.
"""

from __future__ import annotations

__all__ = [
    "LOCK_NAME",
    "METADATA_NAME",
    "SHARED_FOLDER",
    "checkpoint_folder",
    "checkpoint_id_of",
    "check_job_name",
    "check_state_name",
    "is_temporary",
    "temporary_metadata_name",
]

METADATA_NAME = "_metadata"
"""The file whose presence makes a checkpoint folder a checkpoint."""

LOCK_NAME = "_lock"
"""The file in a job's folder that the running job of that name holds an OS lock on."""

SHARED_FOLDER = "shared"
"""The folder beside the ``chk-<id>`` folders holding files incremental snapshots share."""

_FOLDER_PREFIX = "chk-"
_TEMPORARY_PREFIX = f".{METADATA_NAME}."
_FORBIDDEN = ("/", "\\", "\0")


def checkpoint_folder(checkpoint_id: int) -> str:
    """Return the folder name of a checkpoint: ``chk-<id>``."""
    return f"{_FOLDER_PREFIX}{checkpoint_id}"


def checkpoint_id_of(folder: str) -> int | None:
    """Return the id in a ``chk-<id>`` folder name, or ``None`` for any other name."""
    digits = folder.removeprefix(_FOLDER_PREFIX)
    if digits == folder or not digits.isdigit() or not digits.isascii():
        return None
    return int(digits)


def temporary_metadata_name(token: str) -> str:
    """Return the name metadata is written under before it is renamed to ``_metadata``."""
    return f"{_TEMPORARY_PREFIX}{token}.tmp"


def is_temporary(name: str) -> bool:
    """Whether ``name`` is a metadata file still being written (never a checkpoint's)."""
    return name.startswith(_TEMPORARY_PREFIX)


def check_job_name(job: str) -> str:
    """Return ``job`` if it can name a folder, else raise ``ValueError`` saying why."""
    return _check_segment("job name", job)


def check_state_name(name: str) -> str:
    """Return ``name`` if it can name a state file, else raise ``ValueError`` saying why."""
    _check_segment("state file name", name)
    if name == METADATA_NAME or is_temporary(name):
        raise ValueError(f"state file name {name!r} is reserved for checkpoint metadata")
    return name


def _check_segment(kind: str, value: str) -> str:
    if not value or value in (".", "..") or any(c in value for c in _FORBIDDEN):
        raise ValueError(
            f"{kind} {value!r} cannot name a file or folder; use a non-empty name without "
            "'/', '\\' or NUL that is not '.' or '..'"
        )
    return value
