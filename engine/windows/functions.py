"""ProcessWindowFunction and its context: a window's records, all at once, when it fires."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from lockgate.engine.functions.process import RuntimeContext
from lockgate.engine.windows.assigners import Window

__all__ = ["ProcessWindowFunction", "WindowContext"]

IN = TypeVar("IN")
OUT = TypeVar("OUT")
K = TypeVar("K")


@dataclass(frozen=True, slots=True)
class WindowContext:
    """What ``ProcessWindowFunction.process`` is told about the firing window.

    ``window`` is the window (``TimeWindow`` with ``start`` and ``end``, or the
    ``GlobalWindow``); ``watermark`` the operator's event time and ``processing_time`` the
    job's clock when it fired.
    """

    window: Window
    watermark: float
    processing_time: float

    def current_watermark(self) -> float:
        """The operator's watermark when the window fired."""
        return self.watermark

    def current_processing_time(self) -> float:
        """The job's clock when the window fired."""
        return self.processing_time


class ProcessWindowFunction(Generic[IN, OUT, K]):
    """Gets all records of a window and its key when the window fires (Flink's).

    The window operator keeps the records in keyed state until then; ``process`` returns
    (or yields) the records to emit. Prefer ``reduce`` or ``aggregate`` on a windowed
    stream when a running value is enough: they keep one value per window, not every record.
    """

    def open(self, context: RuntimeContext) -> None:
        """Acquire resources; called once per subtask."""

    def process(self, key: K, context: WindowContext, elements: list[IN]) -> Iterable[OUT] | None:
        """Handle one firing of ``context.window`` for ``key``; return the records to emit."""
        raise NotImplementedError(f"{type(self).__name__} must implement process")

    def close(self) -> None:
        """Release resources."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
