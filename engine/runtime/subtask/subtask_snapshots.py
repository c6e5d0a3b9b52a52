"""SubtaskSnapshots: the synchronous part of a subtask's snapshots, aligned and unaligned.

Flink's ``SubtaskCheckpointCoordinator.checkpointState``: take a consistent copy of the
chain's state, pass the barrier on, and hand the copy to the ``SubtaskCheckpointer`` for
the asynchronous part. Aligned, the barrier follows everything the subtask has emitted.
Unaligned, it overtakes what is queued downstream, which becomes output channel state; the
snapshot is held until the input channel state is complete.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from anyio.abc import TaskGroup

from lockgate.engine.checkpointing.messages import SubtaskCheckpointStats, TriggerCheckpoint
from lockgate.engine.events import CheckpointBarrier, SnapshotKind
from lockgate.engine.graph.planning import OperatorChain
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.runtime.snapshots.capture import StateCapture, with_channel_state
from lockgate.engine.runtime.snapshots.subtask_checkpointer import SubtaskCheckpointer
from lockgate.engine.runtime.subtask.heads import Head
from lockgate.engine.runtime.subtask.tails import Tail
from lockgate.engine.time.clock import Clock

__all__ = ["SubtaskSnapshots"]


@dataclass(slots=True)
class SubtaskSnapshots:
    """Takes a subtask's snapshots: copies its chain's state and passes the barrier on.

    A checkpoint id is snapshotted at most once (``SubtaskCheckpointer.accepts``). Before
    an aligned snapshot ``emit_ready`` emits what async operators have ready, so that it
    precedes the barrier; an unaligned snapshot emits nothing, since it may be taken while
    the tail waits for room, and keeps those results in the operators' state.
    """

    chain: OperatorChain
    clock: Clock
    head: Head
    stages: list[tuple[Operator, OperatorScope]]
    tail: Tail
    checkpointer: SubtaskCheckpointer
    emit_ready: Callable[[], Awaitable[None]]
    _task_group: TaskGroup | None = field(default=None, init=False)

    def start(self, group: TaskGroup) -> None:
        """Run the asynchronous part of every snapshot (encoding, writing) in ``group``."""
        self._task_group = group

    async def trigger(self, trigger: TriggerCheckpoint) -> None:
        """Snapshot a source, or a subtask whose input ended: no channel state to wait for."""
        checkpoint_id = trigger.checkpoint_id
        if not self.checkpointer.accepts(checkpoint_id):
            return
        barrier = CheckpointBarrier(checkpoint_id, trigger.timestamp, trigger.options)
        if barrier.options.overtakes:
            await self.unaligned(barrier)
            self.complete_channel_state(checkpoint_id)
        else:
            await self.aligned(barrier)

    async def aligned(self, barrier: CheckpointBarrier) -> None:
        """Snapshot, then forward ``barrier`` after everything emitted."""
        if not self.checkpointer.accepts(barrier.checkpoint_id):
            return
        started = self.clock.now()
        await self.emit_ready()
        captures = await self._capture(barrier)
        await self.tail.forward(barrier)
        stats = self._sync_stats(barrier, started)
        self.checkpointer.complete_async(self._group(), barrier, captures, stats)
        if barrier.options.kind is SnapshotKind.STOP_SAVEPOINT:
            self.head.suspend(barrier.checkpoint_id)  # nothing follows the job's last snapshot

    async def unaligned(self, barrier: CheckpointBarrier) -> None:
        """Snapshot, then send ``barrier`` ahead of everything queued downstream; hold it."""
        if not self.checkpointer.accepts(barrier.checkpoint_id):
            return
        started = self.clock.now()
        captures = await self._capture(barrier)
        outputs = self.tail.overtake(barrier)
        captures = with_channel_state(captures, self.chain.tail.uid, outputs=outputs)
        stats = self._sync_stats(barrier, started, unaligned=True)
        self.checkpointer.hold(barrier, captures, stats)

    def complete_channel_state(self, checkpoint_id: int) -> None:
        """The input channel state of ``checkpoint_id`` is complete: write the snapshot."""
        inputs = self.head.take_channel_state(checkpoint_id)
        self.checkpointer.complete_channel_state(
            self._group(), checkpoint_id, inputs, head_uid=self.chain.head.uid
        )

    async def _capture(self, barrier: CheckpointBarrier) -> list[StateCapture]:
        captures = []
        native = self.checkpointer.takes_native(barrier)
        for operator, scope in self.stages:
            with scope:
                captures.append(operator.capture(barrier.checkpoint_id, native=native))
        sink = await self.tail.capture(barrier)
        head = self.head.capture(barrier.checkpoint_id)
        return captures + [c for c in (head, sink) if c is not None]

    def _sync_stats(
        self, barrier: CheckpointBarrier, started: float, *, unaligned: bool = False
    ) -> SubtaskCheckpointStats:
        now = self.clock.now()
        first = self.head.alignment_started_at(barrier.checkpoint_id, default=started)
        return SubtaskCheckpointStats(
            start_delay=max(0.0, first - barrier.timestamp),
            alignment_duration=max(0.0, started - first),
            sync_duration=now - started,
            unaligned=unaligned,
        )

    def _group(self) -> TaskGroup:
        assert self._task_group is not None, "a snapshot before the subtask runs"
        return self._task_group
