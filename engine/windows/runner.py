"""WindowRunner: the window operator's logic, as the keyed process function it runs.

Per key, keyed state maps each open window (as plain data, ``state_key``) to its contents:
the reduced value, the accumulator, or the list of records. Timers (keyed state too) fire
windows at their end and clean them up once their allowed lateness has passed; a count
trigger keeps each window's count in a second map. So checkpoints, savepoints, recovery and
rescaling carry windows as they carry any keyed state. An event-time window reads a
record's event time as the timestamp it carries (``ctx.timestamp()``); every result is
emitted stamped with its window's ``max_timestamp``, as Flink's ``WindowOperator`` does.

Contents a snapshot may still see are never changed in place: the first change of a
window's accumulator or record list after a snapshot works on a copy (``_owned`` lists the
windows copied since the last snapshot), as Flink's copy-on-write state does.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable
from typing import Any

from lockgate.engine.functions.process import (
    FunctionInitializationContext,
    FunctionSnapshotContext,
    KeyedProcessFunction,
    ProcessContext,
    RuntimeContext,
)
from lockgate.engine.functions.timers import TimeDomain
from lockgate.engine.state import MapStateDescriptor
from lockgate.engine.windows.assigners import TimeWindow, Window, window_of
from lockgate.engine.windows.functions import WindowContext
from lockgate.engine.windows.lateness import cleanup_time
from lockgate.engine.windows.spec import WindowFunctionKind, WindowSpec
from lockgate.engine.windows.triggers import EventTimeTrigger, ProcessingTimeTrigger

__all__ = ["WindowRunner"]

_CONTENTS = MapStateDescriptor[Any, Any]("window-contents")
_COUNTS = MapStateDescriptor[Any, int]("window-counts")
_DOMAINS = {
    EventTimeTrigger: TimeDomain.EVENT_TIME,
    ProcessingTimeTrigger: TimeDomain.PROCESSING_TIME,
}


class WindowRunner(KeyedProcessFunction[Any, Any, Any]):
    """Assigns records to windows, keeps their contents, fires and clears them."""

    def __init__(self, spec: WindowSpec) -> None:
        self.spec = spec
        self.kind = spec.kind
        self.function = spec.function
        self.trigger = spec.effective_trigger
        self.base_trigger = self.trigger.base
        self.count = spec.count
        self.event_time = spec.assigner.is_event_time
        self.lateness = spec.allowed_lateness
        self._assign = spec.assigner.assign_windows
        self._merges = spec.assigner.merges
        self._owned: set[tuple[Any, Any]] = set()

    def open(self, context: RuntimeContext) -> None:
        """Declare the window state; open a process window function."""
        self.contents = context.get_map_state(_CONTENTS)
        self.counts = context.get_map_state(_COUNTS)
        if self.kind is WindowFunctionKind.PROCESS:
            self.function.open(context)

    def close(self) -> None:
        """Close a process window function."""
        if self.kind is WindowFunctionKind.PROCESS:
            self.function.close()

    def initialize_state(self, context: FunctionInitializationContext) -> None:
        """Nothing to load: windows live in keyed state."""

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        """A snapshot now shares every window's contents: change none of them in place."""
        self._owned.clear()

    def process_element(self, value: Any, ctx: ProcessContext[Any]) -> None:
        """Add ``value`` to each of its windows that is not late; fire those that are due.

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
        watermark = ctx.current_watermark()
        placed = False
        merges = self._merges
        for assigned in self._assign(time):
            window = self._merged(assigned, ctx) if merges else assigned
            if event_time and self._cleanup_time(window) <= watermark:
                continue  # its cleanup passed: the window is gone
            placed = True
            new = self._add(window, value, ctx) or merges
            self._on_element(window, watermark, ctx, new=new)
        if not placed and self.spec.late_tag is not None:
            ctx.output(self.spec.late_tag, value)

    def on_timer(self, timestamp: float, ctx: ProcessContext[Any]) -> None:
        """Fire the current key's windows that end at ``timestamp``; clear those due."""
        fires = ctx.time_domain is _DOMAINS.get(type(self.base_trigger))
        windows = [window_of(state_key) for state_key in self.contents.keys()]  # noqa: SIM118 - MapState
        for window in windows:
            if fires and window.max_timestamp == timestamp:
                self._fire(window, ctx)
            if self._cleanup_time(window) == timestamp:
                self._clear(window, ctx)

    def _on_element(
        self, window: Window, watermark: float, ctx: ProcessContext[Any], *, new: bool
    ) -> None:
        # A window's timers are set when it gets its first record (they are keyed state):
        # its cleanup, and the end the time trigger fires at.
        end = window.max_timestamp
        if new and isinstance(window, TimeWindow):  # the global window is never cleaned up
            self._register(self._cleanup_time(window), ctx)
        if self.count is not None:
            self._count(window, self.count, ctx)
        elif self.event_time and end <= watermark:
            self._fire(window, ctx)  # late, within the allowed lateness: fire again
        elif new and type(self.base_trigger) in _DOMAINS:
            self._register(end, ctx)

    def _register(self, timestamp: float, ctx: ProcessContext[Any]) -> None:
        service = ctx.timer_service()
        if self.event_time:
            service.register_event_time_timer(timestamp)
        else:
            service.register_processing_time_timer(timestamp)

    def _count(self, window: Window, count: int, ctx: ProcessContext[Any]) -> None:
        state_key = window.state_key
        seen = (self.counts.get(state_key) or 0) + 1
        self.counts.put(state_key, 0 if seen >= count else seen)
        if seen >= count:
            self._fire(window, ctx)

    def _cleanup_time(self, window: Window) -> float:
        # Flink's cleanupTime: in event time, the end - 1 + lateness of its milliseconds.
        if self.event_time and isinstance(window, TimeWindow):
            return cleanup_time(window.end, self.lateness)
        return window.max_timestamp

    def _add(self, window: Window, value: Any, ctx: ProcessContext[Any]) -> bool:
        """Add ``value`` to the window's contents; return whether the window is new."""
        state_key, kind, contents = window.state_key, self.kind, self.contents
        current = contents.get(state_key)
        present = current is not None or contents.contains(state_key)
        if kind is WindowFunctionKind.REDUCE:
            contents.put(state_key, self.function(current, value) if present else value)
            return not present
        current = self._own(ctx.get_current_key(), state_key, current, present=present)
        if kind is WindowFunctionKind.AGGREGATE:
            contents.put(state_key, self.function.add(value, current))
        else:
            current.append(value)
            contents.put(state_key, current)
        return not present

    def _own(self, key: Any, state_key: Any, current: Any, *, present: bool) -> Any:
        # Contents this epoch has not copied yet may be shared with a snapshot.
        owner = (key, state_key)
        if owner not in self._owned:
            self._owned.add(owner)
            if present:
                return (
                    copy.deepcopy(current)
                    if self.kind is WindowFunctionKind.AGGREGATE
                    else list(current)
                )
        if present:
            return current
        return (
            self.function.create_accumulator() if self.kind is WindowFunctionKind.AGGREGATE else []
        )

    def _fire(self, window: Window, ctx: ProcessContext[Any]) -> None:
        for result in self._results(window, ctx):
            ctx._collect(result, window.max_timestamp)  # unchecked: a global window's is inf

    def _results(self, window: Window, ctx: ProcessContext[Any]) -> Iterable[Any]:
        state_key = window.state_key
        if not self.contents.contains(state_key):
            return ()
        contents: Any = self.contents.get(state_key)
        if self.trigger.purges:
            self._clear(window, ctx)
        if self.kind is WindowFunctionKind.REDUCE:
            return (contents,)
        if self.kind is WindowFunctionKind.AGGREGATE:
            return (self.function.get_result(contents),)
        timers = ctx.timer_service()
        context = WindowContext(window, ctx.current_watermark(), timers.current_processing_time())
        emitted: Iterable[Any] | None = self.function.process(
            ctx.get_current_key(), context, list(contents)
        )
        return () if emitted is None else emitted

    def _clear(self, window: Window, ctx: ProcessContext[Any]) -> None:
        state_key = window.state_key
        self.contents.remove(state_key)
        self.counts.remove(state_key)
        self._owned.discard((ctx.get_current_key(), state_key))

    def _merged(self, window: Window, ctx: ProcessContext[Any]) -> Window:
        # Session windows: merge the new window with the key's windows it overlaps. Those
        # never overlap each other, so one pass finds them all; their timers stay and find
        # no window when they fire.
        assert isinstance(window, TimeWindow)
        merged, absorbed = window, []
        for state_key in self.contents.keys():  # noqa: SIM118 - a MapState, not a dict
            existing = window_of(state_key)
            assert isinstance(existing, TimeWindow)
            if existing.intersects(window):
                merged = merged.cover(existing)
                absorbed.append(existing)
        if not absorbed or absorbed == [merged]:
            return merged
        self._combine(merged, sorted(absorbed), ctx)
        return merged

    def _combine(
        self, merged: TimeWindow, absorbed: list[TimeWindow], ctx: ProcessContext[Any]
    ) -> None:
        parts: list[Any] = [self.contents.get(window.state_key) for window in absorbed]
        count = sum(self.counts.get(window.state_key) or 0 for window in absorbed)
        for window in absorbed:
            self._clear(window, ctx)
        combined: Any = parts[0]
        if self.kind is WindowFunctionKind.AGGREGATE:
            combined = copy.deepcopy(combined)
        elif self.kind is WindowFunctionKind.PROCESS:
            combined = list(combined)
        for part in parts[1:]:
            combined = self._combine_two(combined, part)
        self.contents.put(merged.state_key, combined)
        self._owned.add((ctx.get_current_key(), merged.state_key))
        if count:
            self.counts.put(merged.state_key, count)

    def _combine_two(self, first: Any, second: Any) -> Any:
        if self.kind is WindowFunctionKind.REDUCE:
            return self.function(first, second)
        if self.kind is WindowFunctionKind.AGGREGATE:
            return self.function.merge(first, second)
        first.extend(second)
        return first

    def __repr__(self) -> str:
        return f"<WindowRunner {self.spec.assigner!r} {self.kind.value}>"


def _event_time_of(value: Any, ctx: ProcessContext[Any]) -> float:
    time = ctx.timestamp()
    if time is None or not math.isfinite(time):
        raise ValueError(
            f"record {value!r} carries the timestamp {time!r}, and an event-time window "
            "needs a finite one; a record without one came from an input with no watermark "
            "strategy (in a union or connect) or from a processing-time timer: call "
            "assign_timestamps_and_watermarks() on that input"
        )
    return time
