"""Load a checkpoint's state and spread it over the subtasks of the plan being started."""

from __future__ import annotations

from functools import partial

import anyio.to_thread

from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.restore import redistribute
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot, decode_snapshot
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.errors import RestoreError
from lockgate.engine.planning import ExecutionPlan

__all__ = ["load_restored_state"]


async def load_restored_state(
    metadata: CheckpointMetadata,
    plan: ExecutionPlan,
    storage: CheckpointStorage,
    max_parallelism: int,
    *,
    allow_non_restored_state: bool = False,
) -> dict[str, list[OperatorSnapshot]]:
    """Read every operator's state of ``metadata``, redistributed to the plan's parallelism.

    Raises ``RestoreError`` when the checkpoint cannot belong to this job: another
    max_parallelism, or state for an operator uid the job no longer has (unless
    ``allow_non_restored_state``, which drops that state).
    """
    _check_max_parallelism(metadata, max_parallelism)
    if not allow_non_restored_state:
        _check_every_state_has_an_operator(metadata, plan)
    parallelism = {node.uid: node.parallelism for node in plan.graph}
    return {
        uid: redistribute(await _read_all(uid, handles, storage), parallelism[uid], max_parallelism)
        for uid, handles in metadata.operators.items()
        if uid in parallelism
    }


def _check_max_parallelism(metadata: CheckpointMetadata, max_parallelism: int) -> None:
    if metadata.max_parallelism != max_parallelism:
        raise RestoreError(
            f"checkpoint {metadata.checkpoint_id} was taken with max_parallelism "
            f"{metadata.max_parallelism}, but the job has {max_parallelism}; keyed state is "
            "split into that many key groups, so set max_parallelism back to "
            f"{metadata.max_parallelism}"
        )


def _check_every_state_has_an_operator(metadata: CheckpointMetadata, plan: ExecutionPlan) -> None:
    uids = {node.uid for node in plan.graph}
    for uid, handles in metadata.operators.items():
        if uid not in uids and any(handle is not None for handle in handles.handles):
            raise RestoreError(
                f"checkpoint {metadata.checkpoint_id} holds state for operator '{uid}', which "
                f"the job no longer has; give the operator that owns it uid='{uid}' again, or "
                "pass allow_non_restored_state=True to drop that state"
            )


async def _read_all(
    uid: str, handles: OperatorStateHandles, storage: CheckpointStorage
) -> list[OperatorSnapshot]:
    snapshots = []
    for handle in handles.handles:
        if handle is None:
            snapshots.append(OperatorSnapshot(uid))
            continue
        data = await storage.read_state(handle)
        decode = partial(decode_snapshot, location=handle.location)
        snapshots.append(await anyio.to_thread.run_sync(decode, data))
    return snapshots
