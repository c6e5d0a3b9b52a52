"""Load a checkpoint's state and spread it over the subtasks of the plan being started."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

import anyio.to_thread

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.native_state import NativeKeyedState
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.checkpointing.storage import CheckpointStorage
from lockgate.engine.errors import CheckpointNotFound, RestoreError
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.restore.channel_state import channel_state_problems
from lockgate.engine.restore.compatibility import check_restore, snapshot_name
from lockgate.engine.restore.consistency import check_chain, check_state_file
from lockgate.engine.restore.decoding import Decoder, restore_decoder
from lockgate.engine.restore.increments import apply_increments
from lockgate.engine.restore.native import (
    discard_downloads,
    with_downloaded_keyed_state,
    with_plain_keyed_state,
)
from lockgate.engine.restore.redistribute import redistribute
from lockgate.engine.restore.rescaled import redistribute_native
from lockgate.engine.restore.resolve import RestoreSettings
from lockgate.engine.savepoints.values import ValueCodec
from lockgate.engine.state.native_snapshot import NativeRestoreTarget

__all__ = ["load_restored_state", "read_whole"]


async def load_restored_state(
    restore: RestoreSettings,
    plan: ExecutionPlan,
    max_parallelism: int,
    *,
    codec: ValueCodec | None = None,
    native_target: NativeRestoreTarget | None = None,
) -> dict[str, list[OperatorSnapshot]]:
    """Read every operator's state of ``restore``, redistributed to the plan's parallelism.

    Raises ``RestoreError`` when the checkpoint cannot belong to this job: another
    max_parallelism, or state for an operator uid the job no longer has (unless
    ``allow_non_restored_state``, which drops that state), or in-flight records of an
    unaligned checkpoint on channels the job runs at another parallelism (or no longer
    has); and, naming the file, when a state file contradicts the metadata
    (``consistency.py``). A missing state file raises ``CheckpointNotFound`` saying the
    checkpoint is incomplete.

    State files are read by their bytes (``decoding.py``): canonical ones with ``codec``
    (values of user types), pickled ones only for the job's own checkpoint
    (``restore.own_checkpoint``) or if ``codec`` allows pickle (the user's opt-in), and
    never for a savepoint; otherwise the restore fails before anything is unpickled.

    Native keyed state (an incremental RocksDB checkpoint's files) is read into plain key
    groups, unless ``native_target`` (the job's state backend) opens such files as they are:
    then each subtask's files are downloaded into a folder ``native_target`` gives
    (``native.folder`` of the subtask's snapshot), which the subtask's keyed state backend
    takes as its state. At an unchanged parallelism each subtask's files are its own old
    ones; at another, the old files that hold the most of its key groups, less the others,
    with the rest of them inserted from the other old files (``rescaled.py``). The caller
    deletes the folders no backend took (``discard_downloads``); if loading fails, this
    function deletes them.
    """
    metadata = restore.metadata
    report = check_restore(
        metadata, plan, max_parallelism, allow_non_restored_state=restore.allow_non_restored_state
    )
    if not report.ok:
        raise RestoreError(" ".join(report.problems))
    parallelism = {node.uid: node.parallelism for node in plan.graph}
    codec = codec or ValueCodec()
    decode = restore_decoder(
        codec,
        savepoint=metadata.is_savepoint,
        may_unpickle=restore.own_checkpoint or codec.allow_pickle,
    )
    restored: dict[str, list[OperatorSnapshot]] = {}
    reader = _Reader(restore.storage, decode, metadata, plan, native_target)
    try:
        for uid, handles in metadata.operators.items():
            if uid in parallelism:
                restored[uid] = []
                await reader.load(uid, handles, parallelism[uid], restored[uid])
    except BaseException:
        discard_downloads(restored)
        raise
    return restored


@dataclass(frozen=True, slots=True)
class _Reader:
    storage: CheckpointStorage
    decoder: Decoder
    metadata: CheckpointMetadata
    plan: ExecutionPlan
    native_target: NativeRestoreTarget | None

    async def load(
        self,
        uid: str,
        handles: OperatorStateHandles,
        parallelism: int,
        into: list[OperatorSnapshot],
    ) -> None:
        """Put ``uid``'s state for each of its ``parallelism`` new subtasks into ``into``."""
        # ``into`` holds what was downloaded at every step, so that a failure can delete it.
        rescaling = self.native_target is not None and len(handles.handles) != parallelism
        old = [] if rescaling else into
        await self.read_all(uid, handles, old, keep_native=rescaling)
        problems = channel_state_problems(uid, old, self.metadata, self.plan)
        if problems:
            raise RestoreError(" ".join(problems))
        max_parallelism = self.metadata.max_parallelism
        if not rescaling:
            into[:] = await anyio.to_thread.run_sync(  # a million keys: off the loop
                redistribute, old, parallelism, max_parallelism
            )
            return
        assert self.native_target is not None
        locations = [handle.location if handle else "" for handle in handles.handles]
        await redistribute_native(
            old,
            locations,
            parallelism,
            max_parallelism,
            storage=self.storage,
            target=self.native_target,
            into=into,
        )

    async def read_all(
        self,
        uid: str,
        handles: OperatorStateHandles,
        snapshots: list[OperatorSnapshot],
        *,
        keep_native: bool = False,
    ) -> None:
        # Appends as it reads, so that a failure leaves what was downloaded to delete.
        for index, handle in enumerate(handles.handles):
            if handle is None:
                snapshots.append(OperatorSnapshot(uid))
                continue
            subtask = f"'{uid}' {index + 1}/{handles.parallelism}"
            snapshots.append(await self._read(handle, subtask, keep_native=keep_native))
            check_state_file(
                snapshots[-1],
                uid=uid,
                location=handle.location,
                max_parallelism=self.metadata.max_parallelism,
            )

    async def _read(
        self, handle: StateHandle, subtask: str, *, keep_native: bool
    ) -> OperatorSnapshot:
        try:
            return await read_whole(
                handle,
                self.storage,
                self.decoder,
                self.metadata.max_parallelism,
                native_target=self.native_target,
                keep_native=keep_native,
            )
        except CheckpointNotFound as error:
            raise CheckpointNotFound(_incomplete(self.metadata, subtask, error)) from error


def _incomplete(metadata: CheckpointMetadata, subtask: str, error: CheckpointNotFound) -> str:
    return (
        f"{snapshot_name(metadata)} of job '{metadata.job_name}' is incomplete: {error} "
        f"(state of operator subtask {subtask}); it cannot be restored: restore an older "
        "checkpoint or a savepoint instead"
    )


async def read_whole(
    handle: StateHandle,
    storage: CheckpointStorage,
    decoder: Decoder,
    max_parallelism: int,
    *,
    native_target: NativeRestoreTarget | None = None,
    keep_native: bool = False,
) -> OperatorSnapshot:
    """The whole state one subtask's handle stands for, as plain data or files to open.

    Its file holds either everything, or a memory delta on the files in ``handle.shared``
    (then the chain is applied), or RocksDB's files (``native``; ``handle.shared`` are its
    SST files). Those are read back into plain key groups, or, if ``native_target`` opens
    them as they are, downloaded into a folder it gives (see ``load_restored_state``), or
    with ``keep_native`` left where they are (for ``rescaled.py`` to download).

    Raises:
        RestoreError: naming ``handle.location``, when it is a delta without a full
            snapshot to build on.
    """
    last = await _read(handle, storage, decoder)
    if last.native is not None and keep_native:
        return last
    if last.native is not None:
        folder = _download_folder(last.native, native_target)
        if folder is not None:
            return await with_downloaded_keyed_state(last, storage, folder)
        return await with_plain_keyed_state(
            last, storage, max_parallelism, location=handle.location
        )
    chain = [*[await _read(file, storage, decoder) for file in handle.shared], last]
    check_chain(chain, location=handle.location)
    return apply_increments(chain) if len(chain) > 1 else last


def _download_folder(native: NativeKeyedState, target: NativeRestoreTarget | None) -> Path | None:
    # A snapshot without files (a store that never opened its database) has nothing to open.
    if target is None or not (native.files or native.inline):
        return None
    return target.native_restore_folder(native.backend)


async def _read(
    handle: StateHandle, storage: CheckpointStorage, decoder: Decoder
) -> OperatorSnapshot:
    data = await storage.read_state(handle)
    decode = partial(decoder, location=handle.location)
    return await anyio.to_thread.run_sync(decode, data)
