"""CpuCost: a function for map, filter, flat_map and the like, with a declared CPU cost."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lockgate.engine.simulation.models.model import Model, ModelContext

__all__ = ["CpuCost"]


def _identity(record: Any) -> Any:
    return record


class CpuCost(Model):
    """``function`` (by default: the record itself) costing ``seconds`` of CPU per call.

    CPU does not advance virtual time on its own: Python code runs between two instants.
    A declared cost does: each call lets ``seconds`` of virtual time pass while it holds
    the loop, so the subtask is busy meanwhile and nothing else runs, as on one real core.
    ``env.from_source(...).map(CpuCost(50e-6), uid="parse")`` models a 50 µs parse.
    """

    def __init__(self, seconds: float, function: Callable[..., Any] = _identity) -> None:
        if not seconds >= 0:
            raise ValueError(f"CpuCost: seconds must be 0 or more; got {seconds}")
        self.seconds = seconds
        self.function = function
        self._model = ModelContext("cpu")

    def bind(self, context: ModelContext) -> None:
        """Spend on ``context``'s clock."""
        super().bind(context)
        self._model = context

    def __call__(self, *args: Any) -> Any:
        """Spend ``seconds``, then return what ``function`` returns."""
        self._model.spend(self.seconds)
        return self.function(*args)

    def __repr__(self) -> str:
        return f"<CpuCost {self.seconds} s of {self.function!r}>"
