"""The operators of map, filter, flat_map and process: one user function per record."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.events import Watermark
from lockgate.engine.functions.process import (
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    ProcessContext,
    RuntimeContext,
)
from lockgate.engine.functions.side_outputs import SideOutputCollector
from lockgate.engine.functions.timers import (
    TIMER_STATES,
    KeyedTimers,
    TimeDomain,
    TimerQueue,
    TimerService,
)
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.runtime.operators.base import Operator, key_selector
from lockgate.engine.state import (
    KeyedStateBackend,
)
from lockgate.engine.time.clock import Clock, SystemClock

__all__ = ["FilterOperator", "FlatMapOperator", "MapOperator", "ProcessOperator", "fill"]


class MapOperator(Operator):
    """Emits ``fn(record)`` for each record."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Apply the function to each record."""
        fn = self.function
        return [fn(record) for record in records]


class FilterOperator(Operator):
    """Keeps the records for which the predicate holds."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Keep the records the predicate accepts."""
        predicate = self.function
        return [record for record in records if predicate(record)]


class FlatMapOperator(Operator):
    """Emits every element of the iterable ``fn(record)`` returns.

    ``chunks`` takes a lazy iterable (a generator) only as fast as its chunks are sent on,
    so what one record fans out to never has to fit in memory at once (Flink's Collector
    blocks the same way); a list or tuple the function built is taken whole.
    """

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Concatenate the function's results."""
        out: list[Any] = []
        extend = out.extend
        fn = self.function
        for record in records:
            extend(fn(record))
        return out

    def chunks(self, records: list[Any], limit: int) -> Iterator[list[Any]]:
        """Yield the function's results in order, in lists of about ``limit`` records."""
        out: list[Any] = []
        fn = self.function
        for record in records:
            result = fn(record)
            if type(result) is list or type(result) is tuple:
                out.extend(result)
            else:
                yield from fill(out, iter(result), limit)
            if len(out) >= limit:
                yield out
                out = []
        if out:
            yield out


class ProcessOperator(Operator):
    """Runs a ``KeyedProcessFunction``, its own copy per subtask, under each record's key.

    Its context collects what the function emits with ``collect_with_timestamp`` into the
    batch's output list; ``timestamped`` (the event-time subclass) says whether records
    are ``(timestamp, value)`` pairs.
    """

    timestamped = False

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        self._timers_restored = False  # set below: a backend's files are opened in super()
        super().__init__(node, restored, clock, keyed_state=keyed_state)
        self._fn: KeyedProcessFunction[Any, Any, Any] | KeyedCoProcessFunction[Any, Any, Any, Any]
        self._fn = self.function  # process_batch (here or in a subclass) knows which
        self._key_of = key_selector(node)
        self._clock: Clock = clock or SystemClock()
        self._timers: KeyedTimers | None = None
        self._timer_service: TimerService | None = None
        self._context: ProcessContext[Any] = self._new_context(None)
        self._timers_restored = restored is not None and bool(TIMER_STATES & set(restored.kinds))
        if self._timers_restored and self._keyed_restore is None:  # loaded already
            self._service()  # the restored timers fire without a new registration

    def load_keyed_state(self) -> None:
        """Load the restored keyed state, timers too: they fire without a new registration."""
        super().load_keyed_state()
        if self._timers_restored:
            self._service()

    def process_watermark(self, watermark: Watermark) -> tuple[list[Any], Watermark | None]:
        """Fire the event-time timers the watermark reached, then pass it on."""
        self._context.watermark = watermark.timestamp
        if self._timers is None:
            return [], watermark
        event_time = self._timers.event_time
        return self._fire(event_time, watermark.timestamp, TimeDomain.EVENT_TIME), watermark

    def fire_processing_timers(self, now: float) -> list[Any]:
        """Fire the processing-time timers the clock reached; return what they emit."""
        if self._timers is None:
            return []
        return self._fire(self._timers.processing_time, now, TimeDomain.PROCESSING_TIME)

    def next_processing_timer(self) -> float | None:
        """When the earliest processing-time timer fires, or ``None``."""
        return None if self._timers is None else self._timers.processing_time.next_timestamp()

    def _fire(self, queue: TimerQueue, time: float, domain: TimeDomain) -> list[Any]:
        out: list[Any] = []
        store, context, on_timer = self.keyed_state, self._context, self._fn.on_timer
        context.time_domain, context._out = domain, out
        try:
            for key, timestamp in queue.pop_due(time):
                store.current_key = key
                context._timestamp = timestamp
                emitted = on_timer(timestamp, context)
                if emitted is not None:
                    out.extend(emitted)
        finally:
            context.time_domain = context._timestamp = None
        return out

    def _new_context(self, side_outputs: SideOutputCollector | None) -> ProcessContext[Any]:
        return ProcessContext(
            self.keyed_state, side_outputs, timers=self._service, timestamped=self.timestamped
        )

    def _service(self) -> TimerService:
        if self._timer_service is None:
            self._timers = KeyedTimers(self.keyed_state)
            self._timer_service = TimerService(
                self._timers, self._clock, self.keyed_state, lambda: self._context.watermark
            )
        return self._timer_service

    def open(self, context: RuntimeContext) -> None:
        """Open the user function, which declares its state."""
        super().open(context)
        self._fn.open(context)

    def send_side_outputs_to(self, collector: SideOutputCollector) -> None:
        """Let the function's ``ctx.output`` send to ``collector``."""
        super().send_side_outputs_to(collector)
        self._context = self._new_context(collector)

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Call the function per record under the record's key; collect what it emits."""
        out: list[Any] = []
        extend = out.extend
        store, key_of, context = self.keyed_state, self._key_of, self._context
        context._out = out  # collect_with_timestamp's records join the batch's output
        process_element = self.function.process_element
        for record in records:
            store.current_key = key_of(record)
            emitted = process_element(record, context)
            if emitted is not None:
                extend(emitted)
        return out

    def close(self) -> None:
        """Close the user function, then the keyed state (also if the function fails)."""
        try:
            self._fn.close()
        finally:
            super().close()


def fill(out: list[Any], items: Iterator[Any], limit: int) -> Iterator[list[Any]]:
    """Add ``items`` to ``out``, yielding ``out`` each time it holds ``limit`` (then empty)."""
    while True:
        out.extend(islice(items, limit - len(out)))
        if len(out) < limit:
            return
        yield out.copy()
        out.clear()
