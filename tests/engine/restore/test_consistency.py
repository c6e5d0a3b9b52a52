"""State files that pass their checksums but contradict their metadata fail the restore by name."""

from __future__ import annotations

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import RestoreError, StreamEnvironment
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot, encode_snapshot
from lockgate.engine.checkpointing.storage import MemoryCheckpointStorage

JOB, CHECKPOINT, MAX_PARALLELISM = "sums", 3, 8


def sums_job() -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, max_parallelism=MAX_PARALLELISM)
    env.enable_checkpointing()
    env.from_source(CollectionSource(range(10)), uid="numbers").key_by(lambda n: n % 3).reduce(
        lambda a, b: a + b, uid="sums"
    ).sink_to(CollectSink(), uid="out")
    return env


async def written(storage: MemoryCheckpointStorage, *files: OperatorSnapshot) -> CheckpointMetadata:
    """A checkpoint whose metadata files ``files`` as the two subtasks of 'sums'."""
    handles: list[StateHandle] = []
    for index, snapshot in enumerate(files):
        data = encode_snapshot(snapshot)
        handles.append(await storage.write_state(JOB, CHECKPOINT, f"sums-{index}", data))
    operators = {"sums": OperatorStateHandles(2, tuple(handles))}
    return CheckpointMetadata(JOB, CHECKPOINT, 1.0, MAX_PARALLELISM, operators)


async def restore(storage: MemoryCheckpointStorage, metadata: CheckpointMetadata) -> None:
    env = sums_job()
    env.set_checkpoint_storage(storage)
    await env.execute(JOB, restore_from=metadata)


FULL = OperatorSnapshot("sums", keyed={1: {"reduced": {1: 1}}}, kinds={"reduced": "value"})


async def test_a_file_holding_another_operators_state_is_named() -> None:
    storage = MemoryCheckpointStorage()
    expected = (
        r"state file memory://sums/chk-3/sums-1 is inconsistent with its metadata: the "
        r"metadata names it as state of operator 'sums', but it holds state of operator "
        r"'numbers'; .* restore an older checkpoint or a savepoint instead"
    )

    with pytest.raises(RestoreError, match=expected):
        await restore(storage, await written(storage, FULL, OperatorSnapshot("numbers")))


async def test_a_file_with_a_key_group_the_metadata_does_not_have_is_named() -> None:
    storage = MemoryCheckpointStorage()
    outside = OperatorSnapshot("sums", keyed={MAX_PARALLELISM: {"reduced": {1: 1}}})
    expected = (
        r"state file memory://sums/chk-3/sums-1 of operator 'sums' is inconsistent with its "
        r"metadata: it holds state in key group 8, but the metadata's max_parallelism 8 makes "
        r"key groups 0\.\.7"
    )

    with pytest.raises(RestoreError, match=expected):
        await restore(storage, await written(storage, FULL, outside))


async def test_a_delta_without_a_full_snapshot_to_build_on_is_named() -> None:
    storage = MemoryCheckpointStorage()
    delta = OperatorSnapshot("sums", keyed={2: {"reduced": {2: 2}}}, is_delta=True)

    with pytest.raises(RestoreError, match=r"memory://sums/chk-3/sums-1 is inconsistent.*full"):
        await restore(storage, await written(storage, FULL, delta))
