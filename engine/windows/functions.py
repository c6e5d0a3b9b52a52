"""ProcessWindowFunction and its context: a window's contents, its key and window, when it fires."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lockgate.engine.functions.process import ProcessContext, RuntimeContext
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.windows.assigners import Window

if TYPE_CHECKING:
    from lockgate.engine.windows.window_state import WindowScopedStates

__all__ = ["ProcessWindowFunction", "WindowContext"]

IN = TypeVar("IN")
OUT = TypeVar("OUT")
K = TypeVar("K")
V = TypeVar("V")


class WindowContext:
    """What ``ProcessWindowFunction.process`` and ``clear`` are told about the window.

    ``window`` is the window (``TimeWindow`` with ``start`` and ``end``, or the
    ``GlobalWindow``); ``watermark`` the operator's event time and ``processing_time`` the
    job's clock when it fired. ``window_state()`` is keyed state of this key and window
    (gone when the window is cleaned up); ``global_state()`` is keyed state of the key,
    shared by all its windows. ``output`` sends a record to a side output.
    """

    __slots__ = ("_global", "_process", "_windowed", "processing_time", "watermark", "window")

    def __init__(
        self,
        window: Window,
        watermark: float,
        processing_time: float,
        *,
        window_state: WindowScopedStates | None = None,
        global_state: RuntimeContext | None = None,
        process_context: ProcessContext[Any] | None = None,
    ) -> None:
        self.window = window
        self.watermark = watermark
        self.processing_time = processing_time
        self._windowed = window_state
        self._global = global_state
        self._process = process_context

    def current_watermark(self) -> float:
        """The operator's watermark when the window fired."""
        return self.watermark

    def current_processing_time(self) -> float:
        """The job's clock when the window fired."""
        return self.processing_time

    def window_state(self) -> WindowScopedStates:
        """Keyed state of this key and this window: ``get_state(descriptor)`` and its aliases.

        Raises:
            RuntimeError: on merging (session) windows, whose windows come and go by
                merging (as in Flink); use ``global_state()`` there.
        """
        if self._windowed is None:
            raise RuntimeError(
                f"window {self.window!r}: per-window state is not available on merging "
                "(session) windows, as in Flink; keep state in global_state() instead"
            )
        return self._windowed

    def global_state(self) -> RuntimeContext:
        """Keyed state of this key, shared by all its windows: ``get_state(descriptor)``.

        Raises:
            RuntimeError: outside a running window operator.
        """
        if self._global is None:
            raise RuntimeError("global_state() is only available in a running window operator")
        return self._global

    def output(self, tag: OutputTag[V], value: V) -> None:
        """Emit ``value`` to the side output ``tag``; read it with ``stream.side_output(tag)``.

        Raises:
            RuntimeError: outside a running window operator.
        """
        if self._process is None:
            raise RuntimeError("output() is only available in a running window operator")
        self._process.output(tag, value)

    def __repr__(self) -> str:
        return f"<WindowContext window={self.window!r} watermark={self.watermark}>"


class ProcessWindowFunction(Generic[IN, OUT, K]):
    """Gets a window's contents and its key and window when the window fires (Flink's).

    Given to ``process``, it gets every record of the window (the operator keeps them in
    keyed state until then). Given with ``reduce(fn, window_function)`` or
    ``aggregate(agg, window_function)``, it gets a list of one element, the reduced value
    or the aggregate's result, while the window keeps only that one value. ``process``
    returns (or yields) the records to emit. ``clear`` runs once when the window is
    cleaned up (its end plus the allowed lateness), to drop what it kept in
    ``context.window_state()``; the operator then removes whatever per-window state
    remains.
    """

    def open(self, context: RuntimeContext) -> None:
        """Acquire resources; called once per subtask."""

    def process(self, key: K, context: WindowContext, elements: list[IN]) -> Iterable[OUT] | None:
        """Handle one firing of ``context.window`` for ``key``; return the records to emit."""
        raise NotImplementedError(f"{type(self).__name__} must implement process")

    def clear(self, context: WindowContext) -> None:
        """The window ``context.window`` is cleaned up: drop what you kept for it."""

    def close(self) -> None:
        """Release resources."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
