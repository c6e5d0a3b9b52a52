"""SubtaskCheckpointer: how one subtask takes its part of a checkpoint.

The synchronous part runs on the event loop between two batches and only takes consistent
copies (copy-on-write state snapshots, source positions, the sink's pre-commit; for an
incremental checkpoint of the RocksDB backend, a RocksDB checkpoint). The asynchronous part
— grouping keyed state by key group, encoding (pickle for checkpoints, the canonical format
for savepoints, which go to their own folder), writing, or uploading the SST files no
completed checkpoint uploaded (``NativeSnapshotWriter``) — runs in a task of the subtask's
task group (its CPU work in a worker thread), so records keep flowing, and ends with an
acknowledgement (or a decline) to the checkpoint coordinator.
"""

from __future__ import annotations

import contextlib
import zlib
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import anyio.to_thread
from anyio.abc import TaskGroup

from lockgate.actors import ActorRef, ActorStopped
from lockgate.engine.checkpointing.channel_state import ChannelRecords
from lockgate.engine.checkpointing.gil_handoff import HANDOFF
from lockgate.engine.checkpointing.messages import (
    AcknowledgeCheckpoint,
    CheckpointFailureReason,
    DeclineCheckpoint,
    StateHandle,
    SubtaskCheckpointStats,
    SubtaskId,
)
from lockgate.engine.checkpointing.snapshots import encode_snapshot_measured
from lockgate.engine.checkpointing.storage import CheckpointStorage, savepoint_folder_for
from lockgate.engine.errors import AsyncioRequired, SavepointEncodingError, StateEncodingError
from lockgate.engine.events import CheckpointBarrier
from lockgate.engine.runtime.snapshots.capture import StateCapture, with_channel_state
from lockgate.engine.runtime.snapshots.encoding import (
    GIL_SHARED_ABOVE,
    Encoder,
    detach_all,
    encode_all,
    unmeasured,
)
from lockgate.engine.runtime.snapshots.heap_versions import HeapVersions
from lockgate.engine.runtime.snapshots.incremental import Increment, IncrementalBases
from lockgate.engine.runtime.snapshots.native_writer import NativeSnapshotWriter
from lockgate.engine.savepoints.format import encode_savepoint_state
from lockgate.engine.savepoints.values import ValueCodec
from lockgate.engine.state import KeyedSnapshot, KeyedStateSnapshot
from lockgate.engine.state.native_snapshot import is_native
from lockgate.engine.time.clock import Clock

__all__ = ["CheckpointContext", "SubtaskCheckpointer"]


@dataclass(frozen=True, slots=True)
class CheckpointContext:
    """What a subtask needs to take part in checkpoints: where to write, whom to tell."""

    job_name: str
    subtask: SubtaskId
    storage: CheckpointStorage
    coordinator: ActorRef[Any]
    max_parallelism: int
    clock: Clock
    savepoint_codec: ValueCodec = field(default_factory=ValueCodec)
    incremental_full_every: int | None = None
    run_id: str = "run"


@dataclass(frozen=True, slots=True)
class _HeldSnapshot:
    barrier: CheckpointBarrier
    captures: list[StateCapture]
    stats: SubtaskCheckpointStats


class SubtaskCheckpointer:
    """Writes a subtask's captured state for a checkpoint and acknowledges it.

    At most one acknowledgement or decline is sent per checkpoint; a checkpoint id at or
    below ``last_checkpoint_id`` is never snapshotted again. An unaligned snapshot is held
    until its input channel state is complete, then written; a decline or an abort of its
    checkpoint drops it.
    """

    def __init__(self, context: CheckpointContext) -> None:
        self.context = context
        self.last_checkpoint_id = 0
        full_every = context.incremental_full_every
        self.incremental = None if full_every is None else IncrementalBases(full_every)
        self.native = None if full_every is None else self._native_writer()
        self._held: _HeldSnapshot | None = None
        self._writing: dict[int, anyio.CancelScope] = {}  # asynchronous parts, by checkpoint

    def takes_native(self, barrier: CheckpointBarrier) -> bool:
        """Whether operators capture keyed state as their backend's files for ``barrier``.

        Only incremental checkpoints do; savepoints are always canonical and full.
        """
        return self.native is not None and not barrier.options.kind.is_savepoint

    def accepts(self, checkpoint_id: int) -> bool:
        """Whether a snapshot for ``checkpoint_id`` is still due (not taken before)."""
        return checkpoint_id > self.last_checkpoint_id

    def complete_async(
        self,
        group: TaskGroup,
        barrier: CheckpointBarrier,
        captures: list[StateCapture],
        stats: SubtaskCheckpointStats,
    ) -> None:
        """Record the snapshot as taken and start its asynchronous part in ``group``."""
        self.last_checkpoint_id = max(self.last_checkpoint_id, barrier.checkpoint_id)
        group.start_soon(self._write_and_acknowledge, barrier, captures, stats)

    def hold(
        self,
        barrier: CheckpointBarrier,
        captures: list[StateCapture],
        stats: SubtaskCheckpointStats,
    ) -> None:
        """Record the unaligned snapshot as taken; write it once its channel state is complete."""
        self.last_checkpoint_id = max(self.last_checkpoint_id, barrier.checkpoint_id)
        self._held = _HeldSnapshot(barrier, captures, stats)

    def complete_channel_state(
        self, group: TaskGroup, checkpoint_id: int, inputs: ChannelRecords, *, head_uid: str
    ) -> None:
        """Add the input channel state under ``head_uid``; start writing the held snapshot."""
        held = self._held
        if held is None or held.barrier.checkpoint_id != checkpoint_id:
            return  # declined or aborted meanwhile
        self._held = None
        captures = with_channel_state(held.captures, head_uid, inputs=inputs)
        group.start_soon(self._write_and_acknowledge, held.barrier, captures, held.stats)

    def decline(self, checkpoint_id: int, reason: CheckpointFailureReason, message: str) -> None:
        """Tell the coordinator this subtask will not take part in ``checkpoint_id``."""
        self.last_checkpoint_id = max(self.last_checkpoint_id, checkpoint_id)
        self._drop_held(checkpoint_id)
        self.tell_coordinator(
            DeclineCheckpoint(checkpoint_id, self.context.subtask, reason, message)
        )

    def tell_coordinator(self, message: object) -> None:
        """Send a protocol message, unless the coordinator stopped (the attempt is ending)."""
        with contextlib.suppress(ActorStopped):
            self.context.coordinator.tell_control(message)

    async def _write_and_acknowledge(
        self,
        barrier: CheckpointBarrier,
        captures: list[StateCapture],
        stats: SubtaskCheckpointStats,
    ) -> None:
        versions = HeapVersions(captures)
        with anyio.CancelScope() as self._writing[barrier.checkpoint_id]:  # abort cancels it
            try:
                await self._take_part(barrier, captures, stats)
            finally:
                del self._writing[barrier.checkpoint_id]
                versions.release()  # read, whatever happened: the heap may fold what they froze
        await versions.fold()

    async def _take_part(
        self,
        barrier: CheckpointBarrier,
        captures: list[StateCapture],
        stats: SubtaskCheckpointStats,
    ) -> None:
        checkpoint_id = barrier.checkpoint_id
        started = self.context.clock.now()
        try:
            with HANDOFF.lend():
                handles, in_flight = await self._write(barrier, captures)
        except (SavepointEncodingError, StateEncodingError) as error:
            self.decline(checkpoint_id, CheckpointFailureReason.UNENCODABLE_STATE, str(error))
            return
        except AsyncioRequired:  # a storage that cannot run on this loop never will: fail
            raise
        except Exception as error:  # a storage failure declines; it does not fail the job
            self.decline(checkpoint_id, CheckpointFailureReason.STORAGE_FAILED, repr(error))
            return
        final_stats = replace(
            stats,
            async_duration=self.context.clock.now() - started,
            state_size=sum(handle.size for handle in handles.values()),
            persisted_in_flight=in_flight,
        )
        self.tell_coordinator(
            AcknowledgeCheckpoint(checkpoint_id, self.context.subtask, handles, final_stats)
        )

    async def _write(
        self, barrier: CheckpointBarrier, captures: list[StateCapture]
    ) -> tuple[dict[str, StateHandle], int]:
        # Returns the handles and the bytes of in-flight records among what was written.
        if barrier.options.kind.is_savepoint:
            return await self._write_savepoint(barrier, captures), 0
        natives = [capture for capture in captures if _is_native(capture)]
        handles = await self._write_natives(barrier.checkpoint_id, natives)
        captures = [capture for capture in captures if not _is_native(capture)]
        heap, in_flight = await self._write_heap(barrier, captures)
        return {**handles, **heap}, in_flight

    async def _write_heap(
        self, barrier: CheckpointBarrier, captures: list[StateCapture]
    ) -> tuple[dict[str, StateHandle], int]:
        plans = self._incremental_plans(captures)
        bases = {uid: base.keyed for uid, base in plans.items() if base is not None}
        keyed = {c.uid: c.keyed for c in captures if isinstance(c.keyed, KeyedStateSnapshot)}
        encoded = await self._encode(captures, encode_snapshot_measured, bases)
        keyed = await self._detached({uid: keyed[uid] for uid in plans})
        handles: dict[str, StateHandle] = {}
        new: list[StateHandle] = []  # shared files written: deleted if the write fails
        try:
            for uid, (data, _) in encoded:
                if uid in plans:
                    handles[uid] = await self._write_increment(barrier, uid, data, plans[uid], new)
                    self._record(barrier.checkpoint_id, uid, keyed[uid], handles[uid])
                else:
                    handles[uid] = await self.context.storage.write_state(
                        self.context.job_name, barrier.checkpoint_id, self._file_name(uid), data
                    )
        except BaseException:  # a storage failure, or cancelled: no checkpoint will use them
            with anyio.CancelScope(shield=True):
                await self.context.storage.discard_shared(new)
            raise
        return handles, sum(in_flight for _, (_, in_flight) in encoded)

    async def _write_natives(
        self, checkpoint_id: int, captures: list[StateCapture]
    ) -> dict[str, StateHandle]:
        if not captures:
            return {}
        assert self.native is not None, "native captures come with incremental checkpoints"
        write = self.native.write
        try:
            return {c.uid: await write(checkpoint_id, c, self._file_name(c.uid)) for c in captures}
        finally:  # after a failure or a cancel, the local files of the captures not written go
            with anyio.CancelScope(shield=True):
                for capture in captures:
                    await anyio.to_thread.run_sync(_discard_native, capture)

    async def _write_savepoint(
        self, barrier: CheckpointBarrier, captures: list[StateCapture]
    ) -> dict[str, StateHandle]:
        target = barrier.options.target
        assert target is not None, "a savepoint needs its target folder"
        storage = savepoint_folder_for(target)
        encoder = partial(unmeasured, encode_savepoint_state, self.context.savepoint_codec)
        handles: dict[str, StateHandle] = {}
        for uid, (data, _) in await self._encode(captures, encoder, {}):
            handles[uid] = await storage.write_state(
                self.context.job_name, barrier.checkpoint_id, self._file_name(uid), data
            )
        return handles

    async def _encode(
        self,
        captures: list[StateCapture],
        encoder: Encoder,
        bases: dict[str, KeyedStateSnapshot],
    ) -> list[tuple[str, tuple[bytes, int]]]:
        encode = partial(encode_all, captures, self.context.max_parallelism, encoder, bases)
        if sum(capture.entries for capture in captures) <= GIL_SHARED_ABOVE:
            return encode()
        return await anyio.to_thread.run_sync(encode)

    async def _detached(
        self, keyed: dict[str, KeyedStateSnapshot]
    ) -> dict[str, KeyedStateSnapshot]:
        # The bases of later deltas outlive this checkpoint's versions: they own their dicts.
        detach = partial(detach_all, keyed)
        if sum(snapshot.entries for snapshot in keyed.values()) <= GIL_SHARED_ABOVE:
            return detach()
        return await anyio.to_thread.run_sync(detach)

    def _incremental_plans(self, captures: list[StateCapture]) -> dict[str, Increment | None]:
        # Per operator with heap keyed state: the base its delta builds on (None: full).
        if self.incremental is None:
            return {}
        return {
            capture.uid: self.incremental.base_for(capture.uid)
            for capture in captures
            if isinstance(capture.keyed, KeyedStateSnapshot)
        }

    async def _write_increment(
        self,
        barrier: CheckpointBarrier,
        uid: str,
        data: bytes,
        base: Increment | None,
        new: list[StateHandle],
    ) -> StateHandle:
        name = f"{self._file_name(uid)}-{self.context.run_id}-{barrier.checkpoint_id}"
        with anyio.CancelScope(shield=True):  # a cancel waits for the handle, to delete it
            handle = await self.context.storage.write_shared(self.context.job_name, name, data)
        new.append(handle)
        return handle if base is None else replace(handle, shared=base.chain())

    def _record(
        self, checkpoint_id: int, uid: str, keyed: KeyedSnapshot | None, handle: StateHandle
    ) -> None:
        assert self.incremental is not None and isinstance(keyed, KeyedStateSnapshot)
        self.incremental.written(checkpoint_id, uid, Increment(keyed, handle))

    def notify_complete(self, checkpoint_id: int) -> None:
        """Deltas of later checkpoints may build on what ``checkpoint_id`` wrote."""
        if self.incremental is not None:
            self.incremental.completed(checkpoint_id)
        if self.native is not None:
            self.native.notify_complete(checkpoint_id)

    def notify_aborted(self, checkpoint_id: int) -> None:
        """What ``checkpoint_id`` wrote is deleted: nothing may build on it, or wait for it.

        Its asynchronous part, if still running, is cancelled: what it would write is of no
        use, and the state versions it holds are released.
        """
        self._drop_held(checkpoint_id)
        writing = self._writing.get(checkpoint_id)
        if writing is not None:
            writing.cancel()
        if self.incremental is not None:
            self.incremental.aborted(checkpoint_id)
        if self.native is not None:
            self.native.notify_aborted(checkpoint_id)

    def _native_writer(self) -> NativeSnapshotWriter:
        context = self.context
        return NativeSnapshotWriter(
            context.storage, context.job_name, context.run_id, context.max_parallelism
        )

    def _drop_held(self, checkpoint_id: int) -> None:
        if self._held is not None and self._held.barrier.checkpoint_id <= checkpoint_id:
            HeapVersions(self._held.captures).release()  # never written: nothing reads them
            self._held = None

    def _file_name(self, uid: str) -> str:
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in uid)
        tag = zlib.crc32(uid.encode())
        return f"{safe}-{tag:08x}-{self.context.subtask.subtask_index}"


def _is_native(capture: StateCapture) -> bool:
    return is_native(capture.keyed)


def _discard_native(capture: StateCapture) -> None:
    if is_native(capture.keyed):
        capture.keyed.discard()
