"""OperatorPipeline: how records, watermarks and async results run through a subtask's chain.

The data path of a ``SubtaskActor``, apart from its loop and control messages: a batch from
the head runs through every chained operator, one plain call each, and what is left goes to
the tail. An ``async_map`` (an ``AsyncWaitOperator``) emits nothing when given records; its
results run through the rest of the chain when the subtask takes them. A watermark goes
through the operators in order and leaves through the tail, unless an operator holds it
back (an async operator's fence) and passes it on later. A ``TimestampsOperator`` replaces
upstream watermarks with its own: those its generators emit periodically leave at most every
``watermark_interval`` seconds; those a punctuated generator emits for a record split the
batch there, so the watermark leaves right after that record, whatever the batch size.

The chain's last operator, if its side outputs are read, has a ``SideOutputCollector``: it
is drained into the tail with the main records after each batch or async emission, so
both are routed before any wait (an unaligned barrier finds them) and before any barrier or
watermark.

Each operator counts the records it takes in and sends on (``operator_records``): a few
additions per operator and batch, never per record.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

from anyio.abc import TaskGroup

from lockgate.actors import Doorbell
from lockgate.engine.events import Watermark, WatermarkStatus
from lockgate.engine.functions.process import RuntimeContext
from lockgate.engine.runtime.async_io.operator import AsyncWaitOperator
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.operators.basic import FlatMapOperator, ProcessOperator
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.runtime.operators.timestamps import TimestampsOperator
from lockgate.engine.runtime.subtask.batch_steps import batch_steps
from lockgate.engine.runtime.subtask.tails import Tail
from lockgate.engine.time.clock import Clock
from lockgate.engine.time.multiplexer import CombinedOutput

__all__ = ["FAN_OUT_CHUNK", "OperatorPipeline", "Stage"]

FAN_OUT_CHUNK = 1024
"""A flat_map whose output for one batch passes this many records sends it on in chunks.

Below it a batch is processed whole before anything is sent, as for every other operator;
above it, memory stays bounded whatever one record fans out to, and an unaligned barrier
waits until the batch is done (a snapshot cannot be taken in the middle of a record). About
twice a source's batch: a word count's 5,120 words of a batch of lines, run on through the
rest of the chain whole, leave the processor's caches and outlive young collections (the
garbage collector promotes them); in chunks of this size each runs through the chain while
still cached (``bench/word_count.py``, on the benchmarks page).
"""

Stage = tuple[Operator, OperatorScope]
"""A chained operator, and the scope that names it in errors."""


class OperatorPipeline:
    """Runs a subtask's batches, watermarks and async results through its chained operators.

    Records keep their order through the chain; a watermark leaves after every record that
    came before it, and before any that came after.
    """

    def __init__(
        self, stages: list[Stage], tail: Tail, clock: Clock, *, watermark_interval: float
    ) -> None:
        self.stages = stages
        self._steps = batch_steps(stages)  # a map right before a reduce runs in its loop
        self.tail = tail
        self.clock = clock
        self.watermark_interval = watermark_interval
        operators = [operator for operator, _ in stages]
        self.async_stages = [
            (index, op) for index, op in enumerate(operators) if isinstance(op, AsyncWaitOperator)
        ]
        self.generators = [
            (index, op) for index, op in enumerate(operators) if isinstance(op, TimestampsOperator)
        ]
        self.timed = [
            (index, op) for index, op in enumerate(operators) if isinstance(op, ProcessOperator)
        ]
        self._streaming = {i for i, op in enumerate(operators) if isinstance(op, FlatMapOperator)}
        self._punctuating = dict(self.generators)
        self._side = operators[-1].side_outputs if operators else None
        self._watermark = -math.inf  # the newest watermark the chain's head delivered
        self.output_watermark = -math.inf  # the newest watermark the tail sent on
        self._mid_batch = 0
        self._in = [0] * len(stages)  # records each operator took in, by position
        self._out = [0] * len(stages)  # records each operator sent on (its main output)

    @property
    def input_watermark(self) -> float:
        """The newest watermark the chain's head delivered (``-inf`` before the first)."""
        return self._watermark

    @property
    def split_watermarks(self) -> dict[str, float | None]:
        """Each split's watermark, where the chain's head makes them split by split."""
        first = self._punctuating.get(0)
        return {} if first is None else first.split_watermarks

    @property
    def side_output_records(self) -> dict[str, int]:
        """Records sent to each read side output of the chain's last operator, by tag."""
        return {} if self._side is None else dict(self._side.sent)

    def operator_records(self) -> list[tuple[str, int, int]]:
        """Each chained operator's uid, records taken in and records sent on, head first."""
        return [
            (operator.uid, taken, sent)
            for (operator, _), taken, sent in zip(self.stages, self._in, self._out, strict=True)
        ]

    @property
    def is_mid_batch(self) -> bool:
        """Whether a batch is being sent on in chunks: no snapshot may be taken now."""
        return self._mid_batch > 0

    async def open_operators(self, context_of: Callable[[Operator], RuntimeContext]) -> None:
        """Load each operator's restored keyed state (off the loop) and open it, head first."""
        for operator, scope in self.stages:
            with scope:
                await operator.restore_keyed_state()
                operator.open(context_of(operator))

    async def open_functions(self) -> None:
        """Open the async operators' ``AsyncFunction``s, head first (after ``Operator.open``)."""
        for index, operator in self.async_stages:
            with self.stages[index][1]:
                await operator.open_function()

    async def close_functions(self) -> None:
        """Close the async operators' functions, tail first, each even if another one fails."""
        async with contextlib.AsyncExitStack() as stack:
            for index, operator in self.async_stages:
                stack.push_async_callback(self._close_function, index, operator)

    async def _close_function(self, index: int, operator: AsyncWaitOperator) -> None:
        with self.stages[index][1]:
            await operator.close_function()

    def start(self, group: TaskGroup, doorbell: Doorbell) -> None:
        """Start the async operators' calls and the watermark timer in ``group``."""
        for _, operator in self.async_stages:
            operator.start(group, doorbell)
        if self.generators:
            group.start_soon(self._tick_watermarks, doorbell)

    @property
    def has_backlog(self) -> bool:
        """Whether an async operator holds records it has no room for: read no input."""
        return any(operator.has_backlog for _, operator in self.async_stages)

    @property
    def is_idle(self) -> bool:
        """Whether no async operator holds a record or a watermark."""
        return all(operator.is_idle for _, operator in self.async_stages)

    async def process(self, records: list[Any]) -> None:
        """Run a batch from the head through every operator to the tail."""
        if self._streaming or self._punctuating:
            await self._process_from(0, records)
            return
        position, steps = 0, self._steps
        while position < len(steps):
            process, scope, after = steps[position]
            taken = len(records)
            with scope:
                records = process(records)
            self._count(position, after, taken, len(records))
            position = after
        await self._write(records)

    async def emit_async_results(self) -> None:
        """Run what async operators have ready through the rest of the chain.

        An operator's results wait while a later async operator has a backlog, so that what
        one chain holds stays bounded by the operators' capacities.
        """
        stages = self.async_stages
        for position, (index, operator) in enumerate(stages):
            if any(later.has_backlog for _, later in stages[position + 1 :]):
                return
            await self._emit_ready_of(index, operator)

    async def emit_all_ready(self) -> None:
        """Run everything async operators have ready through the chain (before a barrier)."""
        for index, operator in self.async_stages:
            await self._emit_ready_of(index, operator)

    async def on_watermark(self, watermark: Watermark) -> None:
        """Take a watermark from the head (ignored unless it advances)."""
        if watermark.timestamp > self._watermark:
            self._watermark = watermark.timestamp
            await self._watermark_from(0, watermark)

    async def on_status(self, status: WatermarkStatus) -> None:
        """Take a watermark status from the head."""
        await self._status_from(-1, status)

    async def emit_due_watermarks(self) -> None:
        """Let the generators' statuses and watermarks leave when they are due."""
        now, interval = self.clock.now(), self.watermark_interval
        for index, operator in self.generators:
            for change in operator.on_periodic_emit(now, interval):
                await self._change_from(index, change)

    async def fire_processing_timers(self) -> None:
        """Fire the processing-time timers the clock reached; run what they emit on."""
        now = self.clock.now()
        for index, operator in self.timed:
            due = operator.next_processing_timer()
            if due is None or due > now:
                continue
            with self.stages[index][1]:
                records = operator.fire_processing_timers(now)
            self._out[index] += len(records)
            await self._emit_from(index + 1, records)

    def next_timer_at(self) -> float | None:
        """When the earliest processing-time timer of the chain fires, or ``None``."""
        due = [t for _, op in self.timed if (t := op.next_processing_timer()) is not None]
        return min(due, default=None)

    async def mark_without_input(self) -> None:
        """The head reads nothing (a source subtask without splits): the subtask is idle.

        As Flink marks a source reader without splits idle, so that operators downstream
        do not wait for watermarks that cannot come.
        """
        for index, operator in self.generators:
            if (status := operator.mark_without_input()) is not None:
                await self._status_from(index, status)

    async def _emit_ready_of(self, index: int, operator: AsyncWaitOperator) -> None:
        while True:
            records, watermark = operator.take_ready()
            self._out[index] += len(records)
            await self._emit_from(index + 1, records)
            if watermark is None:
                return
            await self._watermark_from(index + 1, watermark)

    async def _emit_from(self, start: int, records: list[Any]) -> None:
        # Also with no records: side outputs sent meanwhile (failed calls, ctx.output in
        # on_timer) leave now, before whatever the caller sends next.
        if records:
            await self._process_from(start, records)
        elif self._side:
            await self._write([])

    async def _process_from(self, start: int, records: list[Any]) -> None:
        position, steps = start, self._steps
        while position < len(steps):
            if position in self._streaming:
                await self._stream_from(position, records)
                return
            process, scope, after = steps[position]
            taken = len(records)
            with scope:
                records = process(records)
            self._count(position, after, taken, len(records))
            timestamps = self._punctuating.get(position)
            if timestamps is not None and timestamps.changes:
                await self._punctuate(position, timestamps, records)
                return
            if not records:
                break
            position = after
        await self._write(records)

    def _count(self, position: int, after: int, taken: int, sent: int) -> None:
        # The operators from position to after ran as one step (a map fused into its
        # reduce, both one record out per record in): each took and sent what the step did.
        taken_in, sent_on = self._in, self._out
        for index in range(position, after):
            taken_in[index] += taken
            sent_on[index] += sent

    async def _punctuate(
        self, position: int, operator: TimestampsOperator, records: list[Any]
    ) -> None:
        # What the generators emitted for the batch leaves between the records it was
        # emitted after and the rest; no snapshot may be taken before the batch is through.
        self._mid_batch += 1
        try:
            start = 0
            for at, change in operator.take_changes():
                if at > start:
                    await self._process_from(position + 1, records[start:at])
                    start = at
                await self._change_from(position, change)
            if start < len(records):
                await self._process_from(position + 1, records[start:])
        finally:
            self._mid_batch -= 1

    async def _change_from(self, index: int, change: CombinedOutput) -> None:
        # A change of the watermarks generated at operator ``index``: a watermark goes
        # through the rest of the chain, a status straight to the tail.
        if isinstance(change, Watermark):
            await self._watermark_from(index + 1, change)
        else:
            await self._status_from(index, change)

    async def _stream_from(self, position: int, records: list[Any]) -> None:
        operator, scope = self.stages[position]
        assert isinstance(operator, FlatMapOperator)
        self._in[position] += len(records)
        chunks = operator.chunks(records, FAN_OUT_CHUNK)
        with scope:
            first = next(chunks, None)
        with scope:
            second = None if first is None else next(chunks, None)
        if second is None:  # the whole batch fits in one chunk: sent as any other batch
            if first is not None:
                await self._pass_chunk(position, first)
            return
        self._mid_batch += 1
        try:
            await self._send_chunks(position, scope, chunks, [first, second])
        finally:
            self._mid_batch -= 1

    async def _send_chunks(
        self, position: int, scope: OperatorScope, chunks: Any, ready: list[Any]
    ) -> None:
        for chunk in ready:
            await self._pass_chunk(position, chunk)
        while True:
            with scope:
                chunk = next(chunks, None)
            if chunk is None:
                return
            await self._pass_chunk(position, chunk)

    async def _pass_chunk(self, position: int, chunk: list[Any]) -> None:
        self._out[position] += len(chunk)
        await self._process_from(position + 1, chunk)

    async def _write(self, records: list[Any]) -> None:
        if self._side is not None:
            await self.tail.write_with_side(records, self._side.drain())
        elif records:
            await self.tail.write(records)

    async def _watermark_from(self, start: int, watermark: Watermark) -> None:
        # Each operator from ``start`` on takes the watermark, emits what it makes due, and
        # passes it on, unless it holds it back (an async operator's fence, passed on later).
        stages = self.stages
        for position in range(start, len(stages)):
            operator, scope = stages[position]
            with scope:
                records, passed = operator.process_watermark(watermark)
            self._out[position] += len(records)
            await self._emit_from(position + 1, records)
            if passed is None:
                return
            watermark = passed
        self.output_watermark = watermark.timestamp
        await self.tail.emit_watermark(watermark)

    async def _status_from(self, index: int, status: WatermarkStatus) -> None:
        # Operators pass statuses straight on; a later generator replaces them with its own.
        if all(position <= index for position, _ in self.generators):
            await self.tail.emit_status(status)

    async def _tick_watermarks(self, doorbell: Doorbell) -> None:
        # Flink's periodic emission: a timer every auto_watermark_interval lets a watermark
        # that advanced leave, and idleness be noticed, while no record comes.
        period = self.watermark_interval or min(
            (t for _, operator in self.generators if (t := operator.idle_timeout) is not None),
            default=None,
        )
        if period is None:
            return
        while True:
            await self.clock.sleep(period)
            doorbell.ring()

    def __repr__(self) -> str:
        uids = " -> ".join(operator.uid for operator, _ in self.stages)
        return f"<OperatorPipeline {uids or '(no operators)'} watermark={self._watermark}>"
