"""Reading a checkpoint's state files: a missing one says the checkpoint is incomplete."""

from __future__ import annotations

import pytest

from lockgate.engine.checkpointing.storage import MemoryCheckpointStorage
from lockgate.engine.errors import CheckpointNotFound
from tests.engine.restore.test_consistency import FULL, restore, written


async def test_a_missing_file_says_the_checkpoint_is_incomplete_and_what_to_restore() -> None:
    storage = MemoryCheckpointStorage()
    metadata = await written(storage, FULL, FULL)
    await storage.discard_shared([h for h in metadata.operators["sums"].handles[1:] if h])

    expected = (
        r"^checkpoint 3 of job 'sums' is incomplete: no state file at "
        r"memory://sums/chk-3/sums-1 \(state of operator subtask 'sums' 2/2\); it cannot be "
        r"restored: restore an older checkpoint or a savepoint instead$"
    )
    with pytest.raises(CheckpointNotFound, match=expected):
        await restore(storage, metadata)
