"""What ``execute(restore_from=..., claim_mode=...)`` accepts, and what it resolves to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.checkpointing.storage import (
    CheckpointStorage,
    FileSystemCheckpointStorage,
    MemoryCheckpointStorage,
    storage_reading,
)
from lockgate.engine.checkpointing.storage.checkpoint_storage import readable_checkpoints
from lockgate.engine.errors import RestoreError
from lockgate.engine.restore.trust import holds_every_file

__all__ = [
    "ClaimMode",
    "RestoreFrom",
    "RestoreOptions",
    "RestoreSettings",
    "check_claim_mode",
    "resolve_restore",
]

RestoreFrom: TypeAlias = str | CheckpointMetadata | None
ClaimMode: TypeAlias = Literal["no_claim", "claim"]

_CLAIM_MODES = ("no_claim", "claim")


@dataclass(frozen=True, slots=True)
class RestoreSettings:
    """What a job starts from: a checkpoint or savepoint, where it is, and who owns it.

    ``claim`` hands the snapshot to the job, which deletes it once a newer checkpoint
    subsumes it; otherwise (``no_claim``, the default) the job never deletes it. A job
    restored from ``"latest"`` claims it, and with it ``earlier``: the job's other readable
    checkpoints in its storage, oldest first, which its retention then keeps or deletes as
    if no restart had happened.

    ``own_checkpoint`` holds for one of the job's own checkpoints (``"latest"``, or a
    snapshot whose state files all lie inside the job's checkpoint storage): its pickled
    state files were written by the engine for this job, and are unpickled. Every other
    snapshot's state files are read in the canonical savepoint format only, whatever its
    metadata says, unless the job opted in with ``allow_pickle_in_savepoints()``.
    ``fall_back`` (``"latest"``) lets a restore whose state files are missing or corrupt
    take the newest older checkpoint instead.
    """

    metadata: CheckpointMetadata
    storage: CheckpointStorage
    location: str
    allow_non_restored_state: bool = False
    claim: bool = False
    own_checkpoint: bool = False
    fall_back: bool = False
    earlier: tuple[CheckpointMetadata, ...] = ()


@dataclass(frozen=True, slots=True)
class RestoreOptions:
    """How to treat the snapshot a job restores from."""

    allow_non_restored_state: bool = False
    claim: bool = False


def check_claim_mode(claim_mode: str) -> bool:
    """Return whether ``claim_mode`` claims the snapshot; raise ``ValueError`` if unknown."""
    if claim_mode not in _CLAIM_MODES:
        raise ValueError(
            f"claim_mode must be 'no_claim' (the job never deletes the snapshot) or 'claim' "
            f"(the job deletes it once subsumed); got {claim_mode!r}"
        )
    return claim_mode == "claim"


async def resolve_restore(
    storage: CheckpointStorage, job: str, restore_from: RestoreFrom, options: RestoreOptions
) -> RestoreSettings | None:
    """Read the metadata ``restore_from`` names, with a storage that can read its files.

    A location in the job's own kind of storage is read with it (its credentials and
    endpoint); any other path or URL with a storage made for it.

    Raises:
        RestoreError: ``"latest"`` finds no completed checkpoint, or ``claim`` is asked for a
            snapshot given as metadata (the job would not know what to delete).
    """
    if restore_from is None:
        return None
    if isinstance(restore_from, CheckpointMetadata):
        if options.claim:
            raise RestoreError(
                f"cannot claim checkpoint {restore_from.checkpoint_id} given as metadata; pass "
                "its location to claim it, or restore it with claim_mode='no_claim'"
            )
        return RestoreSettings(
            restore_from,
            storage,
            "",
            options.allow_non_restored_state,
            own_checkpoint=holds_every_file(storage, restore_from),
        )
    if restore_from == "latest":
        return await _latest(storage, job, options)
    reader = storage if _reads(storage, restore_from) else storage_reading(restore_from)
    metadata = await reader.read_metadata(restore_from)
    return RestoreSettings(
        metadata,
        reader,
        restore_from,
        options.allow_non_restored_state,
        options.claim,
        own_checkpoint=holds_every_file(storage, metadata),
    )


async def _latest(storage: CheckpointStorage, job: str, options: RestoreOptions) -> RestoreSettings:
    latest = await storage.latest(job)
    if latest is None:
        raise RestoreError(
            f"job '{job}' has no completed checkpoint in {storage!r}; start it without "
            "restore_from, or point the storage at its checkpoints"
        )
    # The job's own checkpoints in its own storage: claimed whatever claim_mode says, so
    # that restarts from "latest" keep max_retained of them, not every one restored from.
    ids = [cid for cid in await storage.completed(job) if cid < latest.checkpoint_id]
    earlier = await readable_checkpoints(storage, job, ids)
    return RestoreSettings(
        latest,
        storage,
        "",
        options.allow_non_restored_state,
        claim=True,
        own_checkpoint=True,
        fall_back=True,
        earlier=tuple(earlier),
    )


def _reads(storage: CheckpointStorage, location: str) -> bool:
    if isinstance(storage, MemoryCheckpointStorage):
        return location.startswith("memory://")
    if isinstance(storage, FileSystemCheckpointStorage):
        return location.startswith(("/", "file://"))
    return location.startswith(("s3://", "s3a://"))
