"""SubtaskCheckpointer: how one subtask takes its part of a checkpoint.

The synchronous part runs on the event loop between two batches and only takes consistent
copies (copy-on-write state snapshots, source positions, the sink's pre-commit). The
asynchronous part — grouping keyed state by key group, encoding (pickle for checkpoints, the
canonical format for savepoints, which go to their own folder), writing — runs in a task
of the subtask's task group (its CPU work in a worker thread), so records keep flowing, and
ends with an acknowledgement (or a decline) to the checkpoint coordinator.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio.to_thread
from anyio.abc import TaskGroup

from lockgate.actors import ActorRef, ActorStopped
from lockgate.engine.checkpointing.messages import (
    AcknowledgeCheckpoint,
    CheckpointFailureReason,
    DeclineCheckpoint,
    StateHandle,
    SubtaskCheckpointStats,
    SubtaskId,
)
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot, encode_snapshot
from lockgate.engine.checkpointing.storage import CheckpointStorage, savepoint_folder_for
from lockgate.engine.clock import Clock
from lockgate.engine.events import CheckpointBarrier
from lockgate.engine.runtime.gil_handoff import HANDOFF
from lockgate.engine.runtime.operators import StateCapture
from lockgate.engine.savepoints.format import encode_savepoint_state
from lockgate.engine.savepoints.values import ValueCodec

__all__ = ["CheckpointContext", "SubtaskCheckpointer"]

# Up to this many keyed entries a snapshot is encoded on the event loop (a few milliseconds):
# handing it to a worker thread while the loop is busy costs more, because the thread then
# waits for the GIL at every step and the two threads trade it thousands of times.
_INLINE_ENTRIES = 20_000


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


class SubtaskCheckpointer:
    """Writes a subtask's captured state for a checkpoint and acknowledges it.

    At most one acknowledgement or decline is sent per checkpoint; a checkpoint id at or
    below ``last_checkpoint_id`` is never snapshotted again.
    """

    def __init__(self, context: CheckpointContext) -> None:
        self.context = context
        self.last_checkpoint_id = 0

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
        self.last_checkpoint_id = barrier.checkpoint_id
        group.start_soon(self._write_and_acknowledge, barrier, captures, stats)

    def decline(self, checkpoint_id: int, reason: CheckpointFailureReason, message: str) -> None:
        """Tell the coordinator this subtask will not take part in ``checkpoint_id``."""
        self.last_checkpoint_id = max(self.last_checkpoint_id, checkpoint_id)
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
        checkpoint_id = barrier.checkpoint_id
        started = self.context.clock.now()
        try:
            with HANDOFF.lend():
                handles = await self._write(barrier, captures)
        except Exception as error:  # a storage failure declines; it does not fail the job
            self.decline(checkpoint_id, CheckpointFailureReason.STORAGE_FAILED, repr(error))
            return
        size = sum(handle.size for handle in handles.values())
        duration = self.context.clock.now() - started
        final_stats = SubtaskCheckpointStats(
            start_delay=stats.start_delay,
            alignment_duration=stats.alignment_duration,
            sync_duration=stats.sync_duration,
            async_duration=duration,
            state_size=size,
        )
        self.tell_coordinator(
            AcknowledgeCheckpoint(checkpoint_id, self.context.subtask, handles, final_stats)
        )

    async def _write(
        self, barrier: CheckpointBarrier, captures: list[StateCapture]
    ) -> dict[str, StateHandle]:
        options = barrier.options
        storage, encoder = self.context.storage, encode_snapshot
        if options.kind.is_savepoint:
            assert options.target is not None, "a savepoint needs its target folder"
            storage = savepoint_folder_for(options.target)
            encoder = partial(encode_savepoint_state, codec=self.context.savepoint_codec)
        encode = partial(_encode_all, captures, self.context.max_parallelism, encoder)
        if sum(capture.entries for capture in captures) <= _INLINE_ENTRIES:
            encoded = encode()
        else:
            encoded = await anyio.to_thread.run_sync(encode)
        handles: dict[str, StateHandle] = {}
        for uid, data in encoded:
            handles[uid] = await storage.write_state(
                self.context.job_name, barrier.checkpoint_id, self._file_name(uid), data
            )
        return handles

    def _file_name(self, uid: str) -> str:
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in uid)
        tag = zlib.crc32(uid.encode())
        return f"{safe}-{tag:08x}-{self.context.subtask.subtask_index}"


def _encode_all(
    captures: list[StateCapture],
    max_parallelism: int,
    encode: Callable[[OperatorSnapshot], bytes],
) -> list[tuple[str, bytes]]:
    # In a worker thread this is one call, and the captures are taken out of the list so
    # that their large copies are freed there, not on the event loop.
    encoded = []
    while captures:
        capture = captures.pop()
        snapshot = capture.materialize(max_parallelism)
        if not snapshot.is_empty:
            encoded.append((capture.uid, encode(snapshot)))
        del capture, snapshot
    return encoded
