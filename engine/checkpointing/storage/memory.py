"""MemoryCheckpointStorage: checkpoints in a dict, for tests and short-lived jobs."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

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
)
from lockgate.engine.errors import CheckpointNotFound

__all__ = ["MemoryCheckpointStorage"]

_SCHEME = "memory://"


class MemoryCheckpointStorage:
    """Keeps checkpoint files in memory, at locations ``memory://<job>/chk-<id>/<name>``.

    It behaves as the durable storages do — metadata makes a checkpoint exist, reads are
    verified against sizes and checksums — but lives only as long as the object, so a
    location is meaningful only to the instance that returned it. ``corrupt`` damages a
    stored file, for tests of corruption handling.
    """

    def __init__(self) -> None:
        self._files: dict[str, bytes] = {}

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        """Store ``data`` as ``memory://<job>/chk-<id>/<name>``."""
        location = _location(check_job_name(job), checkpoint_id, check_state_name(name))
        self._files[location] = bytes(data)
        return StateHandle(location, len(data), checksum_of(data))

    async def read_state(self, handle: StateHandle) -> bytes:
        """Return the bytes at ``handle.location``, verified against its size and checksum."""
        if handle.location not in self._files:
            raise missing_state_file(handle.location)
        return verify_state(handle, self._files[handle.location])

    async def write_shared(self, job: str, name: str, data: bytes) -> StateHandle:
        """Store ``data`` as ``memory://<job>/shared/<name>``."""
        location = f"{_SCHEME}{check_job_name(job)}/{SHARED_FOLDER}/{check_state_name(name)}"
        self._files[location] = bytes(data)
        return StateHandle(location, len(data), checksum_of(data), is_shared=True)

    async def discard_shared(self, handles: Iterable[StateHandle]) -> None:
        """Remove the shared files ``handles`` name."""
        for handle in handles:
            self._files.pop(handle.location, None)

    async def write_metadata(self, metadata: CheckpointMetadata) -> str:
        """Store the metadata as ``memory://<job>/chk-<id>/_metadata`` and return that."""
        job = check_job_name(metadata.job_name)
        location = _location(job, metadata.checkpoint_id, METADATA_NAME)
        self._files[location] = metadata.to_bytes()
        return location

    async def read_metadata(self, location: str) -> CheckpointMetadata:
        """Return the metadata at ``location`` or in the checkpoint folder ``location``."""
        metadata_location = _metadata_location(location)
        return CheckpointMetadata.from_bytes(
            self._read(metadata_location), location=metadata_location
        )

    async def read_checkpoint(self, job: str, checkpoint_id: int) -> CheckpointMetadata:
        """Return the metadata at ``memory://<job>/chk-<id>/_metadata``."""
        return await self.read_metadata(_location(check_job_name(job), checkpoint_id, ""))

    async def latest(self, job: str, *, before: int | None = None) -> CheckpointMetadata | None:
        """Return the newest readable checkpoint of ``job`` (with an id below ``before``)."""
        return await newest_readable(
            await self.completed(job), partial(self.read_checkpoint, job), before=before
        )

    async def completed(self, job: str) -> list[int]:
        """Return the ids of ``job``'s checkpoints that have metadata, ascending."""
        prefix = f"{_SCHEME}{check_job_name(job)}/"
        ids = (
            checkpoint_id_of(location.removeprefix(prefix).split("/")[0])
            for location in self._files
            if location.startswith(prefix) and location.endswith(f"/{METADATA_NAME}")
        )
        return sorted(checkpoint_id for checkpoint_id in ids if checkpoint_id is not None)

    async def discard(self, job: str, checkpoint_id: int) -> None:
        """Remove every file of the checkpoint."""
        prefix = _location(check_job_name(job), checkpoint_id, "")
        for location in [location for location in self._files if location.startswith(prefix)]:
            del self._files[location]

    def corrupt(self, location: str) -> None:
        """Flip every bit of the last byte stored at ``location`` (for tests)."""
        data = self._read(location)
        self._files[location] = data[:-1] + bytes([data[-1] ^ 0xFF]) if data else b"\0"

    def _read(self, location: str) -> bytes:
        try:
            return self._files[location]
        except KeyError:
            raise CheckpointNotFound(f"no checkpoint file is stored at {location}") from None

    def __repr__(self) -> str:
        return f"MemoryCheckpointStorage(files={len(self._files)})"


def _location(job: str, checkpoint_id: int, name: str) -> str:
    return f"{_SCHEME}{job}/{checkpoint_folder(checkpoint_id)}/{name}"


def _metadata_location(location: str) -> str:
    location = location.rstrip("/")
    if location.endswith(f"/{METADATA_NAME}"):
        return location
    return f"{location}/{METADATA_NAME}"
