"""How an operator with two inputs tells them apart: records of the second come wrapped.

``connect`` puts a map to ``SecondInput`` right behind the second stream (chained to it), so
the two-input operator reads one union of channels and dispatches on the record's type.
Watermarks, barriers and backpressure then work as for any union: the operator's watermark
is the minimum of all its input channels', hence of both inputs'. ``PerInput`` applies the
function of each record's input: as a key selector, a map or a flat map function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["PerInput", "SecondInput"]


@dataclass(frozen=True, slots=True)
class SecondInput:
    """A record of a two-input operator's second input, on its way to the operator."""

    value: Any


@dataclass(frozen=True, slots=True)
class PerInput:
    """``first(record)`` for a record of the first input, ``second(value)`` for the second's."""

    first: Callable[[Any], Any]
    second: Callable[[Any], Any]

    def __call__(self, record: Any) -> Any:
        """Apply the function of ``record``'s input to it (unwrapped)."""
        if type(record) is SecondInput:
            return self.second(record.value)
        return self.first(record)
