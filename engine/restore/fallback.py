"""Restore the newest checkpoint that can be read, when the latest one cannot.

A checkpoint exists once its metadata is written, but a state file of it may since have
gone missing or been damaged. Restoring "the latest checkpoint" then means the newest one
that is whole: as ``latest()`` skips unreadable metadata, this skips unreadable state.
Falling back replays the records after the older checkpoint; a sink that committed them at
the newer one sees them again. So each fallback is logged at WARNING, with both ids and
the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.errors import CheckpointNotFound, CorruptCheckpoint
from lockgate.engine.restore.resolve import RestoreSettings

__all__ = ["load_newest_restorable"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

Load = Callable[[RestoreSettings], Awaitable[T]]


async def load_newest_restorable(
    job: str, restore: RestoreSettings, load: Load[T]
) -> tuple[RestoreSettings, T]:
    """Return what ``load`` made of ``restore``, or of the newest older checkpoint it could load.

    Only a restore that may fall back (``restore.fall_back``) does: when ``load`` raises
    ``CorruptCheckpoint`` or ``CheckpointNotFound``, the next older readable checkpoint of
    ``job`` in ``restore.storage`` is loaded instead, and so on. The error is raised when
    there is no older one, or the restore may not fall back. Returns the settings of the
    checkpoint that was loaded, with what ``load`` returned for it.
    """
    while True:
        try:
            return restore, await load(restore)
        except (CorruptCheckpoint, CheckpointNotFound) as error:
            older = await _older(job, restore)
            if older is None:
                raise
            _log_fallback(job, restore.metadata, older, error)
            restore = replace(restore, metadata=older, location="")  # found by id, not by place


async def _older(job: str, restore: RestoreSettings) -> CheckpointMetadata | None:
    if not restore.fall_back:
        return None
    return await restore.storage.latest(job, before=restore.metadata.checkpoint_id)


def _log_fallback(
    job: str, failed: CheckpointMetadata, older: CheckpointMetadata, error: Exception
) -> None:
    logger.warning(
        "job '%s': checkpoint %d cannot be restored (%s); restoring checkpoint %d, the newest "
        "older one, instead: the records after it are processed again",
        job,
        failed.checkpoint_id,
        error,
        older.checkpoint_id,
        extra={
            "job": job,
            "checkpoint_id": failed.checkpoint_id,
            "restored_checkpoint_id": older.checkpoint_id,
        },
    )
