"""WindowEmitter: what a firing window emits, by its function style.

Flink's InternalWindowFunction family:

- ``reduce(fn)`` / ``aggregate(agg)``: the reduced value / the aggregate's result;
- ``reduce(fn, window_function)`` / ``aggregate(agg, window_function)``: what
  ``window_function.process(key, context, [result])`` returns;
- ``process(fn)``: what ``fn.process(key, context, records)`` returns.

With an evictor the window keeps its records: they are evicted before the function,
folded by ``reduce`` or ``aggregate`` (or given to ``process``), evicted after it, and the
window keeps the rest. A process or window function's ``context.window_state()`` is the
firing window's, and its ``clear`` runs when the window is cleaned up. Pure: no event loop.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from lockgate.engine.functions.process import ProcessContext, RuntimeContext
from lockgate.engine.windows.assigners import Window
from lockgate.engine.windows.evictors import Evictor, EvictorContext, TimestampedValue
from lockgate.engine.windows.functions import ProcessWindowFunction, WindowContext
from lockgate.engine.windows.spec import WindowFunctionKind, WindowSpec
from lockgate.engine.windows.window_state import WindowNamespace, WindowScopedStates

__all__ = ["WindowEmitter"]


class WindowEmitter:
    """Turns a window's contents into the records its firing emits.

    ``window_states`` (``None`` on merging windows) is the per-window state a process or
    window function reads through ``context.window_state()``; ``global_state`` is set at
    ``open``.
    """

    __slots__ = (
        "_evictor",
        "_function",
        "_kind",
        "_namespace",
        "_process",
        "global_state",
        "window_states",
    )

    def __init__(
        self, spec: WindowSpec, window_states: WindowScopedStates | None, namespace: WindowNamespace
    ) -> None:
        self._kind = spec.kind
        self._function = spec.function
        self._evictor: Evictor[Any, Any] | None = spec.evictor
        self._process: ProcessWindowFunction[Any, Any, Any] | None = spec.process_function
        self.window_states = window_states
        self._namespace = namespace
        self.global_state: RuntimeContext | None = None

    def open(self, context: RuntimeContext) -> None:
        """Open the process or window function."""
        self.global_state = context
        if self._process is not None:
            self._process.open(context)

    def close(self) -> None:
        """Close the process or window function."""
        if self._process is not None:
            self._process.close()

    def emit(self, window: Window, contents: Any, ctx: ProcessContext[Any]) -> list[Any]:
        """What the window emits for ``contents`` (as ``WindowContents`` holds them)."""
        kind = self._kind
        if kind is WindowFunctionKind.REDUCE:
            results = [contents]
        elif kind is WindowFunctionKind.AGGREGATE:
            results = [self._function.get_result(contents)]
        else:
            results = list(contents)
        return self._apply(window, results, ctx)

    def emit_evicting(
        self, window: Window, records: list[tuple[Any, float | None]], ctx: ProcessContext[Any]
    ) -> tuple[list[Any], list[tuple[Any, float | None]]]:
        """What the window emits for ``records``, and the records the evictor leaves it."""
        assert self._evictor is not None
        evictor = self._evictor
        elements = [TimestampedValue(value, timestamp) for value, timestamp in records]
        context = EvictorContext(ctx.watermark, ctx.timer_service().current_processing_time())
        evictor.evict_before(elements, len(elements), window, context)
        out = self._apply(window, self._folded([e.value for e in elements]), ctx)
        evictor.evict_after(elements, len(elements), window, context)
        return out, [(e.value, e.timestamp) for e in elements]

    def clear(self, window: Window, state_key: Any, ctx: ProcessContext[Any]) -> None:
        """The window is cleaned up: the function's ``clear``, then its per-window state goes."""
        if self._process is None:
            return
        self._namespace.enter(window, state_key)
        self._process.clear(self._context(window, ctx))
        if self.window_states is not None:
            self.window_states.remove_window(state_key)

    def _folded(self, values: list[Any]) -> list[Any]:
        kind, function = self._kind, self._function
        if kind is WindowFunctionKind.REDUCE:
            return [functools.reduce(function, values)] if values else []
        if kind is WindowFunctionKind.AGGREGATE:
            accumulator = function.create_accumulator()
            for value in values:
                accumulator = function.add(value, accumulator)
            return [function.get_result(accumulator)]
        return values

    def _apply(self, window: Window, results: list[Any], ctx: ProcessContext[Any]) -> list[Any]:
        process = self._process
        if process is None:
            return results
        if self._kind is not WindowFunctionKind.PROCESS and not results:
            return []  # a reduce over no records (all evicted) has no result to give
        self._namespace.enter(window, window.state_key)
        context = self._context(window, ctx)
        emitted: Iterable[Any] | None = process.process(ctx.get_current_key(), context, results)
        return [] if emitted is None else list(emitted)

    def _context(self, window: Window, ctx: ProcessContext[Any]) -> WindowContext:
        now = ctx.timer_service().current_processing_time()
        return WindowContext(
            window,
            ctx.watermark,
            now,
            window_state=self.window_states,
            global_state=self.global_state,
            process_context=ctx,
        )

    def __repr__(self) -> str:
        return f"<WindowEmitter {self._kind.value}>"
