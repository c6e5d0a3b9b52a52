"""CheckpointStorage: where checkpoints are written, found, read and discarded."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, runtime_checkable

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.errors import (
    CheckpointNotFound,
    CorruptCheckpoint,
    UnsupportedCheckpointVersion,
)

__all__ = [
    "CheckpointStorage",
    "first_unused_id",
    "missing_state_file",
    "newest_readable",
    "readable_checkpoints",
]


@runtime_checkable
class CheckpointStorage(Protocol):
    """Durable home of checkpoints: state files, then one metadata file per checkpoint.

    A checkpoint exists once ``write_metadata`` has returned, and only then; state files
    written for a checkpoint without metadata belong to no checkpoint. Everything read back
    is checked against the size and checksum recorded when it was written, and a mismatch
    raises ``CorruptCheckpoint`` naming the location.
    """

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        """Store ``data`` as the file ``name`` of checkpoint ``checkpoint_id`` of ``job``."""
        ...

    async def read_state(self, handle: StateHandle) -> bytes:
        """Return the bytes ``handle`` refers to, verified against its size and checksum.

        A file that is not there raises ``CheckpointNotFound`` naming it as a state file.
        """
        ...

    async def write_shared(self, job: str, name: str, data: bytes) -> StateHandle:
        """Store ``data`` as the file ``name`` of ``job``'s shared folder (``<job>/shared``).

        Shared files belong to no single checkpoint: incremental snapshots of later
        checkpoints build on them. ``discard`` leaves them; ``discard_shared`` removes them
        once no retained checkpoint references them.
        """
        ...

    async def discard_shared(self, handles: Iterable[StateHandle]) -> None:
        """Remove the shared files ``handles`` name; files already gone are fine."""
        ...

    async def write_metadata(self, metadata: CheckpointMetadata) -> str:
        """Store ``metadata`` atomically and return its location; the checkpoint now exists."""
        ...

    async def read_metadata(self, location: str) -> CheckpointMetadata:
        """Return the metadata at ``location`` (or in the checkpoint folder ``location``)."""
        ...

    async def read_checkpoint(self, job: str, checkpoint_id: int) -> CheckpointMetadata:
        """Return the metadata of checkpoint ``checkpoint_id`` of ``job``.

        Raises:
            CheckpointNotFound: the checkpoint has no metadata (or is not there).
            CorruptCheckpoint: its metadata does not match its checksum.
        """
        ...

    async def latest(self, job: str, *, before: int | None = None) -> CheckpointMetadata | None:
        """Return the metadata of the newest complete, readable checkpoint of ``job``.

        With ``before``, only checkpoints with a lower id count: the newest older one.
        """
        ...

    async def completed(self, job: str) -> list[int]:
        """Return the ids of ``job``'s checkpoints whose metadata was written, ascending."""
        ...

    async def discard(self, job: str, checkpoint_id: int) -> None:
        """Remove every file of the checkpoint, with or without metadata; no-op if absent."""
        ...


async def newest_readable(
    ids: list[int],
    read: Callable[[int], Awaitable[CheckpointMetadata]],
    *,
    before: int | None = None,
) -> CheckpointMetadata | None:
    """Return the metadata of the highest id in ``ids`` that ``read`` can read, or ``None``.

    Corrupt metadata, metadata in a format version this lockgate cannot read, and metadata
    removed meanwhile are skipped in favour of an older checkpoint. With ``before``, ids
    from ``before`` up are not considered.
    """
    older = [checkpoint_id for checkpoint_id in ids if before is None or checkpoint_id < before]
    for checkpoint_id in sorted(older, reverse=True):
        try:
            return await read(checkpoint_id)
        except (CheckpointNotFound, CorruptCheckpoint, UnsupportedCheckpointVersion):
            continue
    return None


def missing_state_file(location: str) -> CheckpointNotFound:
    """The error ``read_state`` raises for a state file that is not at ``location``."""
    return CheckpointNotFound(f"no state file at {location}")


async def readable_checkpoints(
    storage: CheckpointStorage, job: str, ids: Iterable[int]
) -> list[CheckpointMetadata]:
    """Return the metadata of those checkpoints ``ids`` of ``job`` that can be read, in order.

    Checkpoints ``newest_readable`` skips are skipped here too.
    """
    readable = []
    for checkpoint_id in ids:
        try:
            readable.append(await storage.read_checkpoint(job, checkpoint_id))
        except (CheckpointNotFound, CorruptCheckpoint, UnsupportedCheckpointVersion):
            continue
    return readable


async def first_unused_id(storage: CheckpointStorage, job: str) -> int:
    """Return the id above every checkpoint of ``job`` that ``storage`` holds (1 if none).

    A run numbers its checkpoints from here (or from above the checkpoint it restored, if
    that is higher), so it never writes into a folder of an earlier run, and ids grow with
    time: the highest id of a job is its most recently completed checkpoint, whichever run
    took it.
    """
    return 1 + max(await storage.completed(job), default=0)
