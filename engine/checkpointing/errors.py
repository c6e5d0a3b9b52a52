"""Errors of checkpoint storage: writing, finding and reading checkpoint files.

(A checkpoint that does not complete raises ``lockgate.engine.errors.CheckpointError``.)

```
EngineError                            (lockgate.engine.errors)
└── CheckpointStorageError             a checkpoint cannot be written, found or read
    ├── CheckpointNotFound             nothing is stored at the location
    ├── CorruptCheckpoint              a stored file does not match its size or checksum,
    │                                  or cannot be decoded; names the location
    ├── UnsupportedCheckpointVersion   the metadata was written in a format version this
    │                                  lockgate cannot read
    └── UnsupportedCheckpointStorage   the storage URL names a backend that is not available
```
"""

from __future__ import annotations

from lockgate.engine.errors import EngineError

__all__ = [
    "CheckpointNotFound",
    "CheckpointStorageError",
    "CorruptCheckpoint",
    "UnsupportedCheckpointStorage",
    "UnsupportedCheckpointVersion",
]


class CheckpointStorageError(EngineError):
    """Root of the errors of checkpoint storage; the message names the location."""


class CheckpointNotFound(CheckpointStorageError):
    """Nothing is stored at the location; the message names it."""


class CorruptCheckpoint(CheckpointStorageError):
    """A stored file differs from what was written: wrong size, checksum or encoding.

    Attributes:
        location: where the corrupt file is.
    """

    def __init__(self, location: str, problem: str) -> None:
        super().__init__(
            f"checkpoint file {location} is corrupt: {problem}; restore from an older "
            "checkpoint or savepoint"
        )
        self.location = location


class UnsupportedCheckpointVersion(CheckpointStorageError):
    """Checkpoint metadata was written in a format version this lockgate cannot read."""


class UnsupportedCheckpointStorage(CheckpointStorageError):
    """The storage URL names a backend that this installation does not provide."""
