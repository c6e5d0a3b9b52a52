"""AlignedWindowRunner: the window operator's fast path, a batch of records at a time.

It runs the common case: aligned windows (tumbling or sliding, in event time or on the
job's clock) with their assigner's own trigger (``EventTimeTrigger``,
``ProcessingTimeTrigger``) and no evictor, whatever the function: ``reduce`` or ``aggregate``
(with or without a window function), or ``process``, whose windows keep their records;
``is_aligned`` says whether a spec is one. Session windows, other triggers and evictors take
``WindowRunner``, the general path.

Both paths keep the same keyed state, value for value: each window's contents
(``window-contents``), its timers (``window-timers`` and the key's timers) and a window
function's per-window state. So checkpoints, savepoints, restores and rescaling see no
difference, and a savepoint of either restores into the other. What changes is the work:

- a batch's records are folded in one pass into a dict of its ``(key, window start)``
  slots: per record a key, a window start and a call of the function (or an append to the
  window's records), with no window object, no trigger call and no state access;
- a slot's contents are read from state when it first gets a record after a flush, and
  written back at the next flush: before timers fire (at a watermark, or on the clock) and
  before every snapshot, so firing windows and checkpoints read them from keyed state;
- a window's timers are registered once per flush, for its first record (the trigger's
  at the window's end, then the cleanup timer, as the general path registers them then);
- a firing window is found from its timers, fired and cleaned up without the trigger.

Records for a window the watermark passed within the allowed lateness, and records late
for every window, take the general path's steps one by one, in record order: a late record
fires its window with everything it holds, or goes to the late output (or is counted as
dropped). Pure: no event loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from lockgate.engine.functions.process import (
    FunctionSnapshotContext,
    ProcessContext,
    RuntimeContext,
)
from lockgate.engine.functions.timers import TimeDomain, TimerService
from lockgate.engine.state import MapState
from lockgate.engine.windows.assigners import (
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from lockgate.engine.windows.contents import EMPTY
from lockgate.engine.windows.lateness import cleanup_time
from lockgate.engine.windows.runner import WindowRunner, event_time_of
from lockgate.engine.windows.spec import WindowFunctionKind, WindowSpec
from lockgate.engine.windows.trigger import TriggerResult
from lockgate.engine.windows.triggers import EventTimeTrigger, ProcessingTimeTrigger
from lockgate.engine.windows.window_timers import REGISTRY

__all__ = ["AlignedWindowRunner", "is_aligned"]

_ALIGNED = {
    TumblingEventTimeWindows: EventTimeTrigger,
    SlidingEventTimeWindows: EventTimeTrigger,
    TumblingProcessingTimeWindows: ProcessingTimeTrigger,
    SlidingProcessingTimeWindows: ProcessingTimeTrigger,
}
_FIRE = TriggerResult.FIRE
_INF = math.inf
_nextafter = math.nextafter

Slot = tuple[Any, float]  # (key, window start)
Cell = list[Any]  # [contents]: a fold stores into the cell, hashing its slot once
Slots = dict[Slot, Cell]


def is_aligned(spec: WindowSpec) -> bool:
    """Whether ``spec`` takes the fast path: built-in aligned windows and trigger, no evictor.

    Exact classes only: a subclass of an assigner or trigger may change what it does.
    """
    default = _ALIGNED.get(type(spec.assigner))
    trigger = spec.trigger
    return (
        default is not None
        and (trigger is None or type(trigger) is default)
        and spec.evictor is None
    )


class AlignedWindowRunner(WindowRunner):
    """The window runner of ``is_aligned`` specs: ``process_batch`` folds whole batches.

    Invariant: after each ``flush`` (the operator's, before timers fire, and the runner's,
    before every snapshot) keyed state holds exactly what ``WindowRunner`` would hold after
    the same calls (the tests compare them on random inputs), and the same records have
    left in the same order. Between flushes a window's newest contents are in its slot's
    cell. The operator gives it whole batches only: ``process_element`` (the general
    path's, inherited) knows nothing of the cells.
    """

    path = "aligned"

    def __init__(self, spec: WindowSpec) -> None:
        assert is_aligned(spec), "the window operator checks is_aligned first"
        super().__init__(spec)
        assigner: Any = spec.assigner
        self._size: float = assigner.size
        self._offset: float = assigner.offset
        self._sliding = isinstance(assigner, SlidingEventTimeWindows)
        self._slide: float = assigner.slide if self._sliding else assigner.size
        self._reducing = spec.kind is WindowFunctionKind.REDUCE
        self._watermark = -_INF
        self._slots: Slots = {}  # contents folded since the last flush
        self._timer_service: TimerService | None = None

    def open(self, context: RuntimeContext) -> None:
        """Declare the window state (the general path's); bind what the batches call."""
        super().open(context)
        self._store = context.keyed_state
        self._registry: MapState[Any, Any] = context.get_map_state(REGISTRY)
        function, kind = self.spec.function, self.spec.kind
        self._fold: Callable[[Any, Any], Any] = _FOLDS[kind](function)
        self._result: Callable[[Any], Any] = _RESULTS[kind](function)
        self._windowed = self.spec.process_function is not None

    def process_batch(
        self,
        records: list[Any],
        ctx: ProcessContext[Any],
        key_of: Callable[[Any], Any],
        *,
        stamped: bool,
    ) -> None:
        """Fold ``records`` into their windows; what late records fire goes to ``ctx``.

        Records are ``(timestamp, value)`` pairs on a stream with event time, else values.

        Raises:
            ValueError: naming the record, when an event-time window gets a record that
                carries no finite timestamp.
        """
        self._watermark = ctx.watermark
        self._ctx = ctx
        if self.event_time and not self._sliding and stamped:
            self._tumbling(records, key_of, self._slots)
        else:
            self._aligned(records, key_of, self._slots, stamped=stamped)

    def flush(self) -> None:
        """Write the contents folded since the last flush into keyed state.

        The operator flushes before it fires timers (a watermark, the clock) and the
        runner before every snapshot, so what fires and what checkpoints hold is always
        in keyed state; between flushes a window's newest contents are in ``_slots``. Every
        slot is written, changed in place or not: a heap store holds the object itself, but
        RocksDB holds the copy it encoded when the window arrived.
        """
        slots = self._slots
        if not slots:
            return
        store, put, size = self._store, self.contents.put, self._size
        for (key, start), (contents,) in slots.items():
            store.current_key = key
            put((start, start + size), contents)
        slots.clear()

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        """Flush, then share every window's contents with the snapshot (see the base)."""
        self.flush()
        super().snapshot_state(context)

    def _tumbling(self, records: list[Any], key_of: Callable[[Any], Any], slots: Slots) -> None:
        # The common case, written out: event-time tumbling windows over stamped records,
        # one loop per fold's argument order (reduce's; aggregate's and the appending of
        # records kept for process): a test of the kind per record costs ~5%.
        size, offset, fold = self._size, self._offset, self._fold
        get, arrive = slots.get, self._arrive_tumbling
        try:
            if self._reducing:
                for timestamp, record in records:
                    slot = (key_of(record), timestamp - (timestamp - offset) % size)
                    cell = get(slot)
                    if cell is None:
                        arrive(slot, timestamp, record, slots)
                    else:
                        cell[0] = fold(cell[0], record)
            else:
                for timestamp, record in records:
                    slot = (key_of(record), timestamp - (timestamp - offset) % size)
                    cell = get(slot)
                    if cell is None:
                        arrive(slot, timestamp, record, slots)
                    else:
                        cell[0] = fold(record, cell[0])
        except TypeError:
            self._refuse_unstamped(records)
            raise

    def _aligned(
        self,
        records: list[Any],
        key_of: Callable[[Any], Any],
        accumulated: Slots,
        *,
        stamped: bool,
    ) -> None:
        # Sliding windows, the job's clock, or records without timestamps.
        size, slide, offset, sliding = self._size, self._slide, self._offset, self._sliding
        fold, reducing, event_time = self._fold, self._reducing, self.event_time
        now = self._ctx.timer_service().current_processing_time
        get, arrive = accumulated.get, self._arrive
        for item in records:
            timestamp, record = item if stamped else (None, item)
            time = event_time_of(record, timestamp) if event_time else now()
            key = key_of(record)
            start = time - (time - offset) % slide
            end = start + size
            placed = False
            while not sliding or end > time:  # the assigner's windows, the latest first
                slot = (key, start)
                cell = get(slot)
                if cell is None:
                    placed = arrive(slot, end, timestamp, record, accumulated) or placed
                else:
                    placed = True
                    cell[0] = fold(cell[0], record) if reducing else fold(record, cell[0])
                if not sliding:
                    break
                start -= slide
                end = start + size
            if not placed and event_time:
                self._unplaced(timestamp, record)

    def _arrive_tumbling(
        self, slot: Slot, timestamp: float, record: Any, accumulated: Slots
    ) -> None:
        start = slot[1]
        if start != start:  # NaN: the timestamp was infinite or NaN
            event_time_of(record, timestamp)
        if not self._arrive(slot, start + self._size, timestamp, record, accumulated):
            self._unplaced(timestamp, record)

    def _arrive(
        self,
        slot: Slot,
        end: float,
        timestamp: float | None,
        record: Any,
        accumulated: Slots,
    ) -> bool:
        """A window's first record since the last flush: load the window, or take the record late.

        Returns whether the window took the record (``False``: the window is gone).
        """
        key, start = slot
        max_timestamp = _nextafter(end, -_INF)
        cleanup = cleanup_time(end, self.lateness) if self._lateness_applies else max_timestamp
        watermark = self._watermark
        if self.event_time and cleanup <= watermark:
            return False
        self._store.current_key = key
        state_key = (start, end)
        contents = self.contents.take(state_key)
        self._register_timers(state_key, max_timestamp, cleanup)
        folded = self._folded(contents, record)
        self.contents.put(state_key, folded)  # keys enter state in the general path's order
        if self.event_time and max_timestamp <= watermark:
            self._ctx._timestamp = timestamp  # late, within the lateness: fire now
            self._act(_FIRE, TimeWindow(start, end), state_key, self._ctx)
        else:
            accumulated[slot] = [folded]
        return True

    def _folded(self, contents: Any, record: Any) -> Any:
        if contents is EMPTY:
            return record
        return self._fold(contents, record) if self._reducing else self._fold(record, contents)

    def _register_timers(self, state_key: Any, max_timestamp: float, cleanup: float) -> None:
        # What the trigger's on_element and the cleanup registration do for the window's
        # records until the next flush, in their order: the end timer unless the watermark
        # passed it, then the cleanup timer; each once. After a restore the watermark starts
        # again below every window's end, so a window that fired gets its end timer again.
        event_time = self.event_time
        held: tuple[Any, ...] = self._registry.get(state_key) or ()
        added: tuple[tuple[bool, float], ...] = ()
        end_timer = (event_time, max_timestamp)
        if (not event_time or max_timestamp > self._watermark) and end_timer not in held:
            added = (end_timer,)
        cleanup_timer = (event_time, cleanup)
        if cleanup != _INF and cleanup_timer not in held and cleanup_timer not in added:
            added += (cleanup_timer,)
        if not added:
            return
        register = self._register
        for _, time in added:
            register(time)
        self._registry.put(state_key, held + added)

    def _unplaced(self, timestamp: float | None, record: Any) -> None:
        if timestamp is not None and self._is_late(timestamp, self._watermark):
            self._ctx._timestamp = timestamp
            self._late(record, self._ctx)

    def on_timer(self, timestamp: float, ctx: ProcessContext[Any]) -> None:
        """Fire and clean up the current key's windows whose timer at ``timestamp`` fired."""
        event_time = ctx.time_domain is TimeDomain.EVENT_TIME
        if event_time != self.event_time:  # no built-in trigger sets one: the general path
            super().on_timer(timestamp, ctx)
            return
        timer = (event_time, timestamp)
        due = [(state_key, held) for state_key, held in self._registry.items() if timer in held]
        if len(due) > 1:
            due.sort(key=_first)
        for state_key, held in due:
            remaining = () if len(held) == 1 else tuple(t for t in held if t != timer)
            self._due(state_key, remaining, timestamp, ctx)

    def _due(
        self, state_key: Any, remaining: tuple[Any, ...], timestamp: float, ctx: ProcessContext[Any]
    ) -> None:
        # The trigger's on_event_time / on_processing_time, then the cleanup at its time.
        end = state_key[1]
        max_timestamp = _nextafter(end, -_INF)
        if timestamp == max_timestamp or not self.event_time:
            self._fire(state_key, max_timestamp, ctx)
        cleanup = cleanup_time(end, self.lateness) if self._lateness_applies else max_timestamp
        if cleanup != timestamp:
            self._keep(state_key, remaining)
        elif remaining:  # timers the built-in triggers never leave: the general cleanup
            self._registry.put(state_key, remaining)
            self.trigger_context.start(ctx)
            self._clear_all(TimeWindow(*state_key), state_key, ctx)
        else:
            self._registry.remove(state_key)
            self.contents.clear(state_key)
            if self._windowed:
                self.emitter.clear(TimeWindow(*state_key), state_key, ctx)

    def _fire(self, state_key: Any, max_timestamp: float, ctx: ProcessContext[Any]) -> None:
        # The emitter's results without a window function: the value, or the aggregate's.
        if self._windowed:
            self._act(_FIRE, TimeWindow(*state_key), state_key, ctx)
            return
        contents = self.contents.get(state_key)
        if contents is None and not self.contents.holds(state_key):
            return
        ctx._collect(self._result(contents), max_timestamp)

    def _keep(self, state_key: Any, remaining: tuple[Any, ...]) -> None:
        if remaining:
            self._registry.put(state_key, remaining)
        else:
            self._registry.remove(state_key)

    def _register(self, time: float) -> None:
        service = self._timer_service
        if service is None:  # the operator makes it on first use; it stays
            service = self._timer_service = self._ctx.timer_service()
        if self.event_time:
            service.register_event_time_timer(time)
        else:
            service.register_processing_time_timer(time)

    def _refuse_unstamped(self, records: list[Any]) -> None:
        for timestamp, record in records:
            event_time_of(record, timestamp)

    def __repr__(self) -> str:
        return f"<AlignedWindowRunner {self.spec.assigner!r} {self.kind.value}>"


def _identity(value: Any) -> Any:
    return value


def _appended(record: Any, records: list[Any]) -> list[Any]:
    records.append(record)  # an owned list: take() copied one a snapshot may share
    return records


_FOLDS: dict[WindowFunctionKind, Callable[[Any], Callable[[Any, Any], Any]]] = {
    WindowFunctionKind.REDUCE: lambda function: function,
    WindowFunctionKind.AGGREGATE: lambda function: function.add,
    WindowFunctionKind.PROCESS: lambda function: _appended,
}
_RESULTS: dict[WindowFunctionKind, Callable[[Any], Callable[[Any], Any]]] = {
    WindowFunctionKind.REDUCE: lambda function: _identity,
    WindowFunctionKind.AGGREGATE: lambda function: function.get_result,
    WindowFunctionKind.PROCESS: lambda function: _identity,  # its window function emits
}


def _first(item: tuple[Any, Any]) -> Any:
    return item[0]
