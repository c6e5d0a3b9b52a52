"""SubtaskActor: runs one parallel instance of an operator chain.

Its loop takes one item at a time from its head (a source reader, or the input gate), runs
records through the chained operators, and hands the result to its tail (the output gate,
or a sink writer). Control messages (checkpoint triggers and notifications, state queries,
stop) are taken before data whenever both are waiting. Barriers travel in-band: the input
gate's aligner decides when this subtask snapshots, and the snapshot forwards the barrier
downstream.

With unaligned checkpoints a subtask that waits for room in a full output channel still
acts on unaligned barriers at the heads of its input channels and on unaligned checkpoint
triggers: it snapshots there and then, and its barrier overtakes the records queued
downstream, so a barrier crosses a backpressured job without waiting for channels to drain.

Records, watermarks and async results run through the chain in an ``OperatorPipeline``.
While an async operator holds records it has no room for, the loop does not read its head,
so backpressure reaches upstream through the bounded channels; control messages are still
taken. End of input is passed on once every call has been emitted.
"""

from __future__ import annotations

import contextlib
from collections import deque
from dataclasses import dataclass
from typing import Any

from anyio.abc import TaskGroup

from lockgate.actors import Actor, Channel, Envelope, StopActor, run_with_group
from lockgate.engine.checkpointing.gil_handoff import HANDOFF
from lockgate.engine.checkpointing.messages import (
    CheckpointCommitted,
    CheckpointFailureReason,
    EndSourceInput,
    NotifyCheckpointAborted,
    NotifyCheckpointComplete,
    SubtaskFinished,
    SubtaskId,
    SubtaskInputEnded,
    TriggerCheckpoint,
)
from lockgate.engine.events import EndOfInput, Watermark, WatermarkStatus
from lockgate.engine.functions.process import RuntimeContext
from lockgate.engine.graph.planning import OperatorChain
from lockgate.engine.runtime.metrics.counters import SubtaskCounters
from lockgate.engine.runtime.metrics.record_bytes import RecordBytes
from lockgate.engine.runtime.network.barrier_aligner import (
    AbortCheckpoint,
    ChannelStateComplete,
    TriggerSnapshot,
    TriggerUnalignedSnapshot,
)
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.runtime.snapshots.subtask_checkpointer import SubtaskCheckpointer
from lockgate.engine.runtime.subtask.doorbell_wait import wait_doorbell
from lockgate.engine.runtime.subtask.heads import Head
from lockgate.engine.runtime.subtask.pipeline import OperatorPipeline
from lockgate.engine.runtime.subtask.state_query import QueryState, answer_query
from lockgate.engine.runtime.subtask.statistics import subtask_counters
from lockgate.engine.runtime.subtask.subtask_snapshots import SubtaskSnapshots
from lockgate.engine.runtime.subtask.tails import Tail
from lockgate.engine.time.clock import Clock
from lockgate.engine.time.watermarks import MAX_WATERMARK

__all__ = ["SubtaskActor", "SubtaskSettings"]


@dataclass(frozen=True, slots=True)
class SubtaskSettings:
    """Where a subtask runs and the runtime options it follows."""

    chain: OperatorChain
    subtask_index: int
    max_parallelism: int
    buffer_timeout: float
    clock: Clock
    unaligned: bool = False
    watermark_interval: float = 0.2

    @property
    def subtask_id(self) -> SubtaskId:
        """This subtask's id in the checkpoint protocol."""
        return SubtaskId(self.chain.chain_id, self.subtask_index)


class SubtaskActor(Actor[Any]):
    """One subtask: head -> chained operators -> tail, until it is stopped.

    Records are processed in the order the head delivers them. When the head has nothing,
    the subtask flushes its output buffers and waits on its doorbell. Once its input ended
    and its output is flushed and ended, it reports ``SubtaskFinished`` and keeps answering
    checkpoint messages (the final checkpoint commits its last transactions) until the
    coordinator stops it. Any exception from user code is raised as ``OperatorError``
    naming the operator's uid and this subtask.
    """

    def __init__(
        self,
        settings: SubtaskSettings,
        head: Head,
        operators: list[Operator],
        tail: Tail,
        checkpointer: SubtaskCheckpointer,
    ) -> None:
        self.settings = settings
        self.head = head
        self.operators = operators
        self.tail = tail
        self.checkpointer = checkpointer
        self.records_in = 0
        self.bytes_in = RecordBytes()  # the pickled size of what records_in counts
        self.idle_time = 0.0  # waits that ended; statistics() adds the one going on
        self.idle_since: float | None = None
        self.finished = False
        self.started = settings.clock.now()
        self.stopped_at: float | None = None  # its time stops counting there
        self._stages = [(operator, self._scope(operator.uid)) for operator in operators]
        self.pipeline = OperatorPipeline(
            self._stages, tail, settings.clock, watermark_interval=settings.watermark_interval
        )
        self._async = bool(self.pipeline.async_stages)
        self._generators = bool(self.pipeline.generators)
        self._timed = bool(self.pipeline.timed)
        self._input_ended = False
        self._held_control: deque[Envelope[Any]] = deque()
        self._rung_while_sending = False
        self.snapshots = SubtaskSnapshots(
            settings.chain,
            settings.clock,
            head,
            self._stages,
            tail,
            checkpointer,
            self.pipeline.emit_all_ready,
        )

    async def on_start(self) -> None:
        """Restore and open the operators (and ``AsyncFunction``s), then the head and the tail."""
        await self.pipeline.open_operators(self._runtime_context)
        await self.pipeline.open_functions()
        await self.head.open(self.context.doorbell)
        await self.tail.open()
        if self.settings.unaligned:
            self.tail.wait_for_room_with(self._wait_for_room)

    async def run(self) -> None:
        """Process input and control messages until a ``StopActor``."""
        await run_with_group(self._run_in)

    async def _run_in(self, group: TaskGroup) -> None:
        self.snapshots.start(group)
        self.head.start(group)
        self.pipeline.start(group, self.context.doorbell)
        if self._generators and self.head.reads_nothing:
            await self.pipeline.mark_without_input()
        await self._loop()

    async def on_stop(self) -> None:
        """Close the tail, the head, then (even if those fail) async functions and operators."""
        self.stopped_at = self.settings.clock.now()
        async with contextlib.AsyncExitStack() as stack:  # no async call runs any more
            stack.callback(self._close_operators)
            stack.push_async_callback(self.pipeline.close_functions)
            await self.tail.close()
            await self.head.close()

    def _close_operators(self) -> None:
        # Each operator is closed even if another one fails: it releases its keyed state.
        with contextlib.ExitStack() as stack:
            for operator, scope in reversed(self._stages):
                stack.callback(_close, operator, scope)

    def statistics(self) -> SubtaskCounters:
        """Return this subtask's counters now; the times count the wait going on too."""
        return subtask_counters(self)

    async def _loop(self) -> None:
        clock, timeout, tail = self.settings.clock, self.settings.buffer_timeout, self.tail
        while True:
            while self._held_control or self.context.control:
                if await self._take_control():
                    return
            if self._async:
                await self._emit_async_results()
                item = await self._poll_unless_holding()
            else:
                item = None if self._input_ended else self.head.poll()
            if self._generators:
                await self.pipeline.emit_due_watermarks()
            if self._timed and not self._input_ended:  # nothing fires after the end of input
                await self.pipeline.fire_processing_timers()
            if item is None:
                await tail.flush()
                await self._wait_idle()
            elif type(item) is list:
                self._count_input(item)
                await self.pipeline.process(item)
                HANDOFF.yield_if_lent()
                since = tail.buffered_since
                if since is not None and clock.now() - since >= timeout:
                    await tail.flush()
            else:
                await self._on_event(item)

    def _count_input(self, records: list[Any]) -> None:
        self.records_in += len(records)
        if self.records_in >= self.bytes_in.next_sample:
            self.bytes_in.sample(records, self.records_in)

    async def _on_event(self, event: Any) -> None:
        match event:
            case TriggerSnapshot(barrier=barrier):
                await self.snapshots.aligned(barrier)
            case TriggerUnalignedSnapshot(barrier=barrier):
                await self.snapshots.unaligned(barrier)
            case ChannelStateComplete(checkpoint_id=checkpoint_id):
                self.snapshots.complete_channel_state(checkpoint_id)
            case AbortCheckpoint(checkpoint_id=checkpoint_id):
                reason = CheckpointFailureReason.ALIGNMENT_ABORTED
                self.checkpointer.decline(checkpoint_id, reason, "a newer barrier arrived")
            case Watermark():
                await self.pipeline.on_watermark(event)
            case WatermarkStatus():
                await self.pipeline.on_status(event)
            case EndOfInput():
                await self.pipeline.on_watermark(MAX_WATERMARK)
                self._input_ended = True
                await self._finish_when_emptied()
                if not self.finished:  # async calls still in flight
                    self.checkpointer.tell_coordinator(SubtaskInputEnded(self.settings.subtask_id))

    async def _poll_unless_holding(self) -> Any:
        if not self._holds_input():
            return self.head.poll()
        if self.settings.unaligned:  # unaligned barriers pass a backlog, as they pass records
            await self._act_on_priority_input()
        return None

    def _holds_input(self) -> bool:
        return self._input_ended or self.pipeline.has_backlog

    async def _emit_async_results(self) -> None:
        await self.pipeline.emit_async_results()
        if self._input_ended:
            await self._finish_when_emptied()

    async def _finish_when_emptied(self) -> None:
        if not self.finished and self.pipeline.is_idle:
            await self._finish()

    async def _finish(self) -> None:
        await self.tail.end_input()
        self.finished = True
        self.checkpointer.tell_coordinator(SubtaskFinished(self.settings.subtask_id))

    async def _wait_idle(self) -> None:
        if self._rung_while_sending:  # that ring may have been for the loop: poll again
            self._rung_while_sending = False
            return
        clock = self.settings.clock
        self.idle_since = started = clock.now()
        try:
            await wait_doorbell(self.context.doorbell, clock, deadline=self._wake_at())
        finally:
            self.idle_since = None
            self.idle_time += clock.now() - started

    def _wake_at(self) -> float | None:
        # Nothing rings when an alignment times out or a processing-time timer is due.
        deadline = self.head.alignment_deadline
        if not self._timed or self._input_ended or (timer := self.pipeline.next_timer_at()) is None:
            return deadline
        return timer if deadline is None else min(deadline, timer)

    async def _wait_for_room(self, channel: Channel[Any], item: Any) -> None:
        # The tail waits here for room in a full channel (unaligned checkpoints only).
        deadline = self.head.alignment_deadline
        await wait_doorbell(
            self.context.doorbell, self.settings.clock, room_in=channel, deadline=deadline
        )
        self._rung_while_sending = True
        if self.pipeline.is_mid_batch:  # a snapshot now would lose the rest of the batch
            return
        await self._act_on_priority_input()
        await self._take_overtaking_triggers()

    async def _act_on_priority_input(self) -> None:
        for decided in self.head.poll_priority():
            if isinstance(
                decided, TriggerUnalignedSnapshot | ChannelStateComplete | AbortCheckpoint
            ):
                await self._on_event(decided)
            else:
                self.head.defer(decided)

    async def _take_overtaking_triggers(self) -> None:
        # Unaligned triggers are taken now; other control messages wait, in order, for the
        # loop, which takes them before anything else.
        while (envelope := super().next_control()) is not None:
            message = envelope.message
            if isinstance(message, TriggerCheckpoint) and message.options.overtakes:
                await self.snapshots.trigger(message)
            else:
                self._held_control.append(envelope)

    def next_control(self) -> Envelope[Any] | None:
        """Return a control message held back behind an unaligned trigger first, in order."""
        if self._held_control:
            return self._held_control.popleft()
        return super().next_control()

    async def _take_control(self) -> bool:
        envelope = self.next_control()
        if envelope is None:
            return False
        match envelope.message:
            case StopActor():
                return True
            case TriggerCheckpoint():
                await self.snapshots.trigger(envelope.message)
            case NotifyCheckpointComplete(checkpoint_id=checkpoint_id):
                await self._notify_complete(checkpoint_id)
            case NotifyCheckpointAborted(checkpoint_id=checkpoint_id):
                self.head.resume(checkpoint_id)
                await self._notify_aborted(checkpoint_id)
            case EndSourceInput():
                self.head.end_input()
            case QueryState():  # between batches, on this loop: the one place state is read
                answer_query(envelope.message, self.operators)
            case other:
                raise TypeError(f"subtask '{self.name}' got unknown control message {other!r}")
        return False

    async def _notify_complete(self, checkpoint_id: int) -> None:
        self.checkpointer.notify_complete(checkpoint_id)
        for operator, scope in self._stages:
            with scope:
                operator.notify_checkpoint_complete(checkpoint_id)
        await self.head.notify_checkpoint_complete(checkpoint_id)
        await self.tail.notify_checkpoint_complete(checkpoint_id)
        committed = CheckpointCommitted(checkpoint_id, self.settings.subtask_id)
        self.checkpointer.tell_coordinator(committed)  # a client may wait for every commit

    async def _notify_aborted(self, checkpoint_id: int) -> None:
        self.checkpointer.notify_aborted(checkpoint_id)
        for operator, scope in self._stages:
            with scope:
                operator.notify_checkpoint_aborted(checkpoint_id)
        await self.head.notify_checkpoint_aborted(checkpoint_id)
        await self.tail.notify_checkpoint_aborted(checkpoint_id)

    def _runtime_context(self, operator: Operator) -> RuntimeContext:
        settings = self.settings
        return RuntimeContext(
            uid=operator.uid,
            subtask_index=settings.subtask_index,
            parallelism=settings.chain.parallelism,
            max_parallelism=settings.max_parallelism,
            clock=settings.clock,
            keyed_state=operator.keyed_state,
            operator_state=operator.operator_state,
        )

    def _scope(self, uid: str) -> OperatorScope:
        return OperatorScope(uid, self.settings.subtask_index, self.settings.chain.parallelism)

    @property
    def display_name(self) -> str:
        """The subtask as people read it: ``'<chain>' <index + 1>/<parallelism>``."""
        index, chain = self.settings.subtask_index, self.settings.chain
        return f"{chain.name!r} {index + 1}/{chain.parallelism}"

    def __repr__(self) -> str:
        return f"<SubtaskActor {self.display_name}>"


def _close(operator: Operator, scope: OperatorScope) -> None:
    with scope:
        operator.close()
