"""AsyncWaitOperator: the runtime form of ``async_map`` (Flink's ``AsyncWaitOperator``).

Each record becomes an entry of a result queue and a call, made by a worker: a task in the
subtask's task group that awaits the user function, with the rate limit, the timeout and
the retries the spec asks for, then takes the next record. Workers are started as needed, at
most ``capacity``; an idle one waits to be handed a record, which costs far less than a new
task per record. The subtask's loop feeds the operator with ``process_batch`` (which emits
nothing at once), pops results with ``take_ready`` whenever the doorbell rings, and stops
reading input while ``has_backlog``: records the queue has no room for yet.

With ``on_failure=tag`` a record whose calls failed for good completes its entry with a
``SideRecord``: it leaves the queue when its result would have, and ``take_ready`` moves it
to the side output collector, so it stays in checkpointed state until emitted.
"""

from __future__ import annotations

import random
import reprlib
from collections import deque
from dataclasses import dataclass
from typing import Any

from anyio.abc import TaskGroup

from lockgate.actors import Doorbell
from lockgate.engine.checkpointing.snapshots import ASYNC_INPUTS_STATE, OperatorSnapshot
from lockgate.engine.errors import OperatorError
from lockgate.engine.events import Watermark
from lockgate.engine.functions.async_io import AsyncMapSpec
from lockgate.engine.functions.process import RuntimeContext
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.runtime.async_io.call_deadlines import CallDeadlines
from lockgate.engine.runtime.async_io.function_lifetime import FunctionLifetime
from lockgate.engine.runtime.async_io.handoff import Handoff, handoff_for_this_loop
from lockgate.engine.runtime.async_io.result_queue import AsyncEntry, result_queue
from lockgate.engine.runtime.async_io.token_bucket import TokenBucket
from lockgate.engine.runtime.metrics.latency import LatencyHistogram
from lockgate.engine.runtime.metrics.model import AsyncIoMetrics
from lockgate.engine.runtime.operators.base import Operator, own_copy
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.runtime.snapshots.capture import StateCapture
from lockgate.engine.state import KeyedStateBackend, ListStateDescriptor
from lockgate.engine.time.clock import Clock, SystemClock

__all__ = ["STAMPED_INPUTS", "AsyncWaitOperator", "SideRecord"]

_INPUTS = ListStateDescriptor[Any](ASYNC_INPUTS_STATE)
STAMPED_INPUTS = ListStateDescriptor[Any]("__async_stamped_inputs__")
"""Where a subtask on a stream with event time stores its records, with their timestamps."""


@dataclass(slots=True)
class _Counters:
    in_flight: int = 0
    calls: int = 0
    completed: int = 0
    retries: int = 0
    timeouts: int = 0
    failures: int = 0


@dataclass(frozen=True, slots=True)
class SideRecord:
    """A failed input record in the result queue, bound for the failure side output."""

    record: Any


class AsyncWaitOperator(Operator):
    """Runs up to ``capacity`` calls of an async function at once; emits their results.

    Results leave in input order (``ordered``) or as calls complete, never across a
    watermark. The records of calls in flight, of results not yet emitted and of the
    backlog are the operator's list state at a checkpoint (split evenly on rescaling); a
    restored subtask calls them again before it takes new input, so each record's result
    is emitted once per attempt and a transactional sink commits it exactly once.
    The records are stored under ``ASYNC_INPUTS_STATE``; those ``StampedAsyncWaitOperator``
    stored with timestamps are read too (without them), so a savepoint moves across.
    """

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        super().__init__(node, restored, clock, keyed_state=keyed_state)
        self.spec: AsyncMapSpec = node.function
        self.function = own_copy(self.spec.function)
        self.clock: Clock = clock or SystemClock()
        self._queue = result_queue(ordered=self.spec.ordered)
        self._inputs = self.operator_state.get_list_state(_INPUTS)
        self._stamped_inputs = self.operator_state.get_list_state(STAMPED_INPUTS)
        self._backlog: deque[Any] = deque(self._restored_inputs())
        self._retry = self.spec.retry_policy
        self._fallback = self.spec.fallback
        self._failure_tag = self.spec.failure_tag
        self._side_pending = 0  # failed records in the queue, bound for the side output
        self._deadlines = (
            None if self.spec.timeout is None else CallDeadlines(self.clock, self.spec.timeout)
        )
        self._latency = LatencyHistogram()
        self._counts = _Counters()
        self._group: TaskGroup | None = None
        self._doorbell: Doorbell | None = None
        self._scope = OperatorScope(self.uid, 0, 1)
        self._random = random.Random()
        self._bucket: TokenBucket | None = None
        self._failure: OperatorError | None = None
        self._idle: list[Handoff] = []
        self._lifetime = FunctionLifetime(self.function)
        self._context: RuntimeContext | None = None

    def open(self, context: RuntimeContext) -> None:
        """Learn where this subtask runs: for error messages, the seed and the rate share."""
        super().open(context)
        self._context = context
        self._scope = OperatorScope(context.uid, context.subtask_index, context.parallelism)
        seed = self._retry.seed
        self._random = random.Random(None if seed is None else seed + context.subtask_index)
        if self.spec.rate_limit is not None:
            share = self.spec.rate_limit / context.parallelism
            self._bucket = TokenBucket(share, burst=max(1.0, share), now=self.clock.now())

    async def open_function(self) -> None:
        """Await an ``AsyncFunction``'s ``open(context)``: after ``open``, before any call."""
        assert self._context is not None, "open() comes first"
        await self._lifetime.open(self._context)

    async def close_function(self) -> None:
        """Await an ``AsyncFunction``'s ``close()`` once no call runs (if it was opened)."""
        await self._lifetime.close()

    def start(self, group: TaskGroup, doorbell: Doorbell) -> None:
        """Start calling, in ``group``; ring ``doorbell`` whenever a result is ready."""
        self._group, self._doorbell = group, doorbell
        if self._deadlines is not None:
            group.start_soon(self._deadlines.run)
        self._fill()

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Queue the records and start their calls while there is room; emit nothing now."""
        self._backlog.extend(records)
        self._fill()
        return []

    def process_watermark(self, watermark: Watermark) -> tuple[list[Any], Watermark | None]:
        """Queue the watermark as a fence behind every record so far; ``take_ready`` passes it."""
        if self._backlog:
            self._backlog.append(watermark)
        else:
            self._queue.add_watermark(watermark)
        return [], None

    def take_ready(self) -> tuple[list[Any], Watermark | None]:
        """Return the results that may be emitted now, then a watermark they reached, if any.

        After a watermark, call again: results behind it may be ready too. Calls start for
        the room freed.

        Raises:
            OperatorError: a call failed and the policy is to fail the job.
        """
        if self._failure is not None:
            raise self._failure
        records, watermark = self._queue.pop_ready()
        if self._side_pending:
            records = self._split_side(records)
        if records or self._backlog:
            self._fill()
        return records, watermark

    def _restored_inputs(self) -> list[Any]:
        stamped = (record for _, record in self._stamped_inputs.get())
        return [*self._inputs.get(), *stamped]

    def _split_side(self, records: list[Any]) -> list[Any]:
        # Failed records go to the side output (dropped if nobody reads it); results stay.
        main: list[Any] = []
        side, tag = self.side_outputs, self._failure_tag
        assert tag is not None, "only an operator with on_failure=tag has side records"
        for record in records:
            if type(record) is not SideRecord:
                main.append(record)
                continue
            self._side_pending -= 1
            if side is not None:
                side.collect(tag, record.record)
        return main

    @property
    def has_backlog(self) -> bool:
        """Whether records wait for room in the queue: the subtask must not read input."""
        return bool(self._backlog)

    @property
    def is_idle(self) -> bool:
        """Whether no record is queued or waiting: every result has been taken."""
        return not self._backlog and self._queue.is_empty

    def capture(self, checkpoint_id: int, *, native: bool = False) -> StateCapture:
        """Store the records whose results are not emitted yet, in input order, then capture."""
        backlog = [record for record in self._backlog if type(record) is not Watermark]
        self._inputs.update([*self._queue.inputs(), *backlog])
        self._stamped_inputs.update([])
        return super().capture(checkpoint_id, native=native)

    def statistics(self) -> AsyncIoMetrics:
        """Return this operator's counters now."""
        counts = self._counts
        return AsyncIoMetrics(
            uid=self.uid,
            subtask_index=self._scope.subtask_index,
            capacity=self.spec.capacity,
            in_flight=counts.in_flight,
            queued=len(self._queue),
            backlog=len(self._backlog),
            calls=counts.calls,
            completed=counts.completed,
            retries=counts.retries,
            timeouts=counts.timeouts,
            failures=counts.failures,
            latency=self._latency.snapshot(),
        )

    def _fill(self) -> None:
        group, queue, backlog, idle = self._group, self._queue, self._backlog, self._idle
        if group is None:
            return
        room = self.spec.capacity - len(queue)
        for _ in range(min(room, len(backlog))):
            if not backlog:  # the fences behind the last records moved too
                return
            entry = self._next_entry()
            if idle:
                idle.pop().hand(entry)
            else:
                group.start_soon(self._work, entry)

    def _next_entry(self) -> AsyncEntry:
        # The backlog never starts with a watermark: those right behind a record move with it.
        backlog, queue = self._backlog, self._queue
        entry = queue.add(backlog.popleft())
        while backlog and type(backlog[0]) is Watermark:
            queue.add_watermark(backlog.popleft())
        return entry

    async def _work(self, entry: AsyncEntry) -> None:
        doorbell = self._doorbell
        assert doorbell is not None
        queue, backlog, capacity = self._queue, self._backlog, self.spec.capacity
        plain = self._bucket is None and self._deadlines is None and self._retry.attempts == 1
        call = self._call_once if plain else self._call
        new_handoff = handoff_for_this_loop()  # asyncio or trio: the loop it runs on
        while True:
            await call(entry)
            doorbell.ring()
            if backlog and len(queue) < capacity:
                entry = self._next_entry()
                continue
            handoff = new_handoff()
            self._idle.append(handoff)
            entry = await handoff.wait()

    async def _call_once(self, entry: AsyncEntry) -> None:
        # The common case, one call with no rate limit, timeout or retry, in one frame: each
        # coroutine frame between the worker and the user's call costs loop time per record.
        counts, now = self._counts, self.clock.now
        counts.calls += 1
        counts.in_flight += 1
        started = now()
        try:
            result = await self.function(entry.input)
        except Exception as error:
            self._give_up_in_scope(entry, error)
            return
        finally:
            counts.in_flight -= 1
        self._latency.record(now() - started)
        self._complete(entry, [result])

    async def _call(self, entry: AsyncEntry) -> None:
        try:
            with self._scope:
                results = await self._results_of(entry.input)
        except OperatorError as error:
            self._failed(error)
        else:
            self._complete(entry, results)

    def _give_up_in_scope(self, entry: AsyncEntry, error: Exception) -> None:
        try:
            with self._scope:
                results = self._give_up(entry.input, error)
        except OperatorError as failure:
            self._failed(failure)
        else:
            self._complete(entry, results)

    def _complete(self, entry: AsyncEntry, results: list[Any]) -> None:
        self._counts.completed += 1
        self._queue.complete(entry, results)

    def _failed(self, error: OperatorError) -> None:
        # Raised by take_ready in the subtask's own loop, so that calls failing together
        # fail the job with one error, not a group of them.
        self._failure = self._failure or error

    async def _results_of(self, record: Any) -> list[Any]:
        retry, attempt = self._retry, 1
        while True:
            try:
                return [await self._attempt(record, attempt)]
            except Exception as error:
                if not retry.retries(error, attempt):
                    return self._give_up(record, error)
            self._counts.retries += 1
            await self.clock.sleep(retry.backoff(attempt, self._random.random()))
            attempt += 1

    def _give_up(self, record: Any, error: Exception) -> list[Any]:
        self._counts.failures += 1
        if self._failure_tag is not None:
            self._side_pending += 1
            return [SideRecord(record)]
        if self._fallback is None:
            raise error
        return list(self._fallback(record, error))

    async def _attempt(self, record: Any, attempt: int) -> Any:
        if self._bucket is not None:
            delay = self._bucket.reserve(self.clock.now())
            if delay > 0:
                await self.clock.sleep(delay)
        counts, clock = self._counts, self.clock
        counts.calls += 1
        counts.in_flight += 1
        started = clock.now()
        try:
            result = await (
                self.function(record) if self._deadlines is None else self._timed(record, attempt)
            )
        finally:
            counts.in_flight -= 1
        self._latency.record(clock.now() - started)
        return result

    async def _timed(self, record: Any, attempt: int) -> Any:
        assert self._deadlines is not None
        deadline = self._deadlines.start()
        try:
            with deadline.scope:
                return await self.function(record)
        finally:
            deadline.done = True
        self._counts.timeouts += 1
        raise TimeoutError(
            f"the call for record {reprlib.repr(record)} took longer than "
            f"timeout={self.spec.timeout} s (attempt {attempt} of {self._retry.attempts}); "
            "raise timeout= or add retry="
        )

    def __repr__(self) -> str:
        return (
            f"<AsyncWaitOperator {self.uid!r} queued={len(self._queue)}/{self.spec.capacity} "
            f"backlog={len(self._backlog)} in_flight={self._counts.in_flight}>"
        )
