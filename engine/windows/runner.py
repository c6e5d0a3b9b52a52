"""WindowRunner: the window operator's logic (Flink's WindowOperator), as a keyed process function.

Per record: assign its windows (merging session windows first, calling the trigger's
``on_merge``), skip the windows that are gone, add the record to each window's contents,
ask the trigger (``on_element``), fire and purge as it answers, and register the window's
cleanup timer. Per timer: each window that registered it asks the trigger
(``on_event_time`` or ``on_processing_time``) and fires and purges as it answers; at a
window's cleanup time (its end plus the allowed lateness) the window goes with all its
state: contents, trigger state and timers (after the trigger's ``clear``), per-window
state (after the window function's ``clear``). An event-time window reads a record's
event time as the timestamp it carries (``ctx.timestamp()``); a processing-time or global
window places records by the job's clock, and gives its trigger and evictor the timestamp
a record carries, if any (Flink's ``hasTimestamp``). Every result leaves stamped with its
window's ``max_timestamp``, as Flink's ``WindowOperator`` emits it.

Everything is keyed state: contents (``window-contents``), trigger state
(``window-trigger-state/<name>``), each window's timers (``window-timers``), the live
session windows (``window-set``) and per-window state of window functions
(``window-state/<name>``). So
checkpoints, savepoints, recovery and rescaling carry windows as they carry any keyed state.
"""

from __future__ import annotations

import math
from typing import Any

from lockgate.engine.functions.process import (
    FunctionInitializationContext,
    FunctionSnapshotContext,
    KeyedProcessFunction,
    ProcessContext,
    RuntimeContext,
)
from lockgate.engine.functions.timers import TimeDomain
from lockgate.engine.windows.assigners import TimeWindow, Window, window_of
from lockgate.engine.windows.contents import CONTENTS, ContentsKind, WindowContents
from lockgate.engine.windows.emitter import WindowEmitter
from lockgate.engine.windows.lateness import cleanup_time, is_element_late
from lockgate.engine.windows.merging import WINDOW_SET, MergingWindowSet
from lockgate.engine.windows.spec import WindowFunctionKind, WindowSpec
from lockgate.engine.windows.trigger import TriggerResult
from lockgate.engine.windows.trigger_context import WindowTriggerContext
from lockgate.engine.windows.window_state import WindowNamespace, WindowScopedStates
from lockgate.engine.windows.window_timers import REGISTRY, WindowTimers

__all__ = ["WindowRunner", "event_time_of"]

_KINDS = {
    WindowFunctionKind.REDUCE: ContentsKind.REDUCED,
    WindowFunctionKind.AGGREGATE: ContentsKind.ACCUMULATOR,
    WindowFunctionKind.PROCESS: ContentsKind.RECORDS,
}
CONTINUE = TriggerResult.CONTINUE
_INF = math.inf


class WindowRunner(KeyedProcessFunction[Any, Any, Any]):
    """Assigns records to windows, keeps their contents, fires, purges and clears them.

    The general path: every window spec runs here record by record; ``path`` names it.
    """

    path = "general"

    def __init__(self, spec: WindowSpec) -> None:
        self.spec = spec
        self.kind = spec.kind
        self.trigger = spec.effective_trigger
        self.event_time = spec.assigner.is_event_time
        self.lateness = spec.allowed_lateness
        self._lateness_applies = bool(self.lateness) and self.event_time
        self._assign = spec.assigner.assign_windows
        self._merges = spec.assigner.merges
        self._evicting = spec.evictor is not None
        self._function_namespace = WindowNamespace()  # the window function's window
        self.late_records_dropped = 0  # late for every window, and no late-data side output

    def open(self, context: RuntimeContext) -> None:
        """Declare the window state; open a process or window function."""
        spec, get = self.spec, context.get_map_state
        kind = ContentsKind.TIMESTAMPED if self._evicting else _KINDS[spec.kind]
        self.contents = WindowContents(context.keyed_state, get(CONTENTS), kind, spec.function)
        self.timers = WindowTimers(get(REGISTRY))
        self.trigger_context = trigger_context = WindowTriggerContext(
            context.keyed_state, self.timers, get
        )
        self._on_element = self.trigger.on_element
        self._register_cleanup = (
            trigger_context.register_event_time_timer
            if self.event_time
            else trigger_context.register_processing_time_timer
        )
        self.windows = MergingWindowSet(get(WINDOW_SET)) if self._merges else None
        window_states = (
            WindowScopedStates(get, "window-state", self._function_namespace)
            if spec.process_function is not None and not self._merges
            else None
        )
        self.emitter = WindowEmitter(spec, window_states, self._function_namespace)
        self.emitter.open(context)

    def close(self) -> None:
        """Close a process or window function."""
        self.emitter.close()

    def initialize_state(self, context: FunctionInitializationContext) -> None:
        """Nothing to load: windows live in keyed state."""

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        """A snapshot now shares every window's contents: change none of them in place."""
        self.contents.snapshot_taken()

    def process_element(self, value: Any, ctx: ProcessContext[Any]) -> None:
        """Add ``value`` to each of its windows that is not gone; fire and purge as told.

        Results leave through ``ctx``, stamped with their window's ``max_timestamp``.

        Raises:
            ValueError: naming the record, when an event-time window gets a record that
                carries no finite timestamp.
        """
        event_time = self.event_time
        time = (
            _event_time_of(value, ctx)
            if event_time
            else ctx.timer_service().current_processing_time()
        )
        record_time = time if event_time else ctx.timestamp()  # Flink's hasTimestamp
        watermark = ctx.watermark
        trigger_context = self.trigger_context
        trigger_context.ctx, trigger_context.key_timers = ctx, None  # start(ctx), inlined
        on_element, contents, merges = self._on_element, self.contents, self._merges
        register_cleanup, lateness = self._register_cleanup, self._lateness_applies
        placed = False
        for assigned in self._assign(time):
            window = self._merged(assigned, trigger_context) if merges else assigned
            cleanup = self._cleanup_time(window) if lateness else window.max_timestamp
            if event_time and cleanup <= watermark:
                self._drop_late(window, assigned)
                continue  # its cleanup passed: the window is gone
            if merges and window is assigned:
                self._live().keep(window)  # type: ignore[arg-type]
            placed = True
            state_key = window.state_key
            contents.add(state_key, value, record_time)
            trigger_context.enter(window, state_key)
            result = on_element(value, record_time, window, trigger_context)
            if result is not CONTINUE:
                self._act(result, window, state_key, ctx)
            if cleanup != _INF:  # in the window's namespace: the trigger sees it fire
                register_cleanup(cleanup)
        if not placed and self._is_late(time, watermark):
            self._late(value, ctx)

    def on_timer(self, timestamp: float, ctx: ProcessContext[Any]) -> None:
        """Ask the trigger of each window that set this timer; clean up the windows due."""
        event_time = ctx.time_domain is TimeDomain.EVENT_TIME
        cleans = event_time == self.event_time  # cleanup follows the assigner's time
        trigger_context = self.trigger_context
        trigger_context.start(ctx)
        trigger, windows = self.trigger, self.windows
        key_timers = trigger_context.of_key()
        for state_key in self.timers.pop(key_timers, timestamp, event_time=event_time):
            if windows is not None and not windows.contains(state_key):
                continue  # a merged-away or cleaned-up session window
            window = window_of(state_key)
            trigger_context.enter(window, state_key)
            if event_time:
                result = trigger.on_event_time(timestamp, window, trigger_context)
            else:
                result = trigger.on_processing_time(timestamp, window, trigger_context)
            if result is not CONTINUE:
                self._act(result, window, state_key, ctx)
            if cleans and self._cleanup_time(window) == timestamp:
                self._clear_all(window, state_key, ctx)

    def _act(
        self,
        result: TriggerResult,
        window: Window,
        state_key: Any,
        ctx: ProcessContext[Any],
    ) -> None:
        if result.is_fire:
            end = window.max_timestamp
            for emitted in self._emit(window, state_key, ctx):
                ctx._collect(emitted, end)  # unchecked: a global window's is inf
        if result.is_purge:
            self.contents.clear(state_key)

    def _emit(self, window: Window, state_key: Any, ctx: ProcessContext[Any]) -> list[Any]:
        contents = self.contents.get(state_key)
        if contents is None and not self.contents.holds(state_key):
            return []
        if not self._evicting:
            return self.emitter.emit(window, contents, ctx)
        out, kept = self.emitter.emit_evicting(window, contents, ctx)
        self.contents.replace_records(state_key, kept)
        return out

    def _cleanup_time(self, window: Window) -> float:
        # Flink's cleanupTime: in event time, the end - 1 + lateness of its milliseconds
        # (without lateness, the window's max timestamp: cleanup_time(end, 0) is that).
        if self._lateness_applies and isinstance(window, TimeWindow):
            return cleanup_time(window.end, self.lateness)
        return window.max_timestamp

    def _clear_all(self, window: Window, state_key: Any, ctx: ProcessContext[Any]) -> None:
        """The window's cleanup time: it goes, with its contents, trigger state and timers."""
        self.contents.clear(state_key)
        self._forget(window, state_key)
        self.emitter.clear(window, state_key, ctx)
        if self.windows is not None:
            self.windows.retire(state_key)

    def _forget(self, window: Window, state_key: Any) -> None:
        # The trigger clears what it keeps; what it left, the runner removes.
        trigger_context = self.trigger_context
        trigger_context.enter(window, state_key)
        self.trigger.clear(window, trigger_context)
        trigger_context.states.remove_window(state_key)
        key_timers = trigger_context.of_key()  # sets trigger_context.key
        self.timers.remove_window(trigger_context.key, key_timers, state_key)

    def _is_late(self, time: float, watermark: float) -> bool:
        # A record no window took goes aside only if it is late (Flink's isSkippedElement
        # and isElementLate): one in a gap between sliding windows may be on time.
        return self.event_time and is_element_late(time, self.lateness, watermark)

    def _late(self, value: Any, ctx: ProcessContext[Any]) -> None:
        if self.spec.late_tag is None:
            self.late_records_dropped += 1
        else:
            ctx.output(self.spec.late_tag, value)

    def _drop_late(self, window: Window, assigned: Window) -> None:
        if self.windows is not None and window is not assigned:
            self.windows.retire(window.state_key)

    def _merged(self, window: Window, trigger_context: WindowTriggerContext) -> Window:
        # Session windows: merge the new window with the key's live windows it overlaps or
        # touches. The trigger merges its state and timers into the merged window, then
        # each absorbed window's trigger state and timers (its cleanup timer too) go. The
        # new window itself is returned only when it is new on its own (not live yet).
        assert isinstance(window, TimeWindow)
        merged, absorbed = self._live().add(window)
        if not absorbed:
            return merged
        trigger_context.enter(merged, merged.state_key)
        trigger_context.merged = absorbed
        try:
            self.trigger.on_merge(merged, trigger_context)
        finally:
            trigger_context.merged = ()
        for old in absorbed:
            self._forget(old, old.state_key)
        self.contents.merge(merged.state_key, [old.state_key for old in absorbed])
        return merged

    def _live(self) -> MergingWindowSet:
        assert self.windows is not None
        return self.windows

    def __repr__(self) -> str:
        return f"<WindowRunner {self.spec.assigner!r} {self.kind.value}>"


def _event_time_of(value: Any, ctx: ProcessContext[Any]) -> float:
    return event_time_of(value, ctx.timestamp())


def event_time_of(value: Any, time: float | None) -> float:
    """``time``, the timestamp the record ``value`` carries, if it is finite.

    Raises:
        ValueError: naming the record, when ``time`` is ``None`` or not finite.
    """
    if time is None or not math.isfinite(time):
        raise ValueError(
            f"record {value!r} carries the timestamp {time!r}, and an event-time window "
            "needs a finite one; a record without one came from an input with no watermark "
            "strategy (in a union or connect) or from a processing-time timer: call "
            "assign_timestamps_and_watermarks() on that input"
        )
    return time
