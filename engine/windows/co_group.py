"""CoGroupWindowFunction: a window of both inputs of a join, split back into its two sides.

Flink builds window joins and ``coGroup`` on the window machinery: the two inputs become one
stream of tagged records keyed by the join key, cut into windows, and a window function
splits each firing window's records by their tag. Here the tag is the one every two-input
operator reads (``two_inputs``): records of the second input arrive as ``SecondInput``.
So a join window is keyed state like any window: checkpoints, savepoints and rescaling
carry it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lockgate.engine.functions.joins import CoGroup
from lockgate.engine.functions.two_inputs import SecondInput
from lockgate.engine.windows.functions import ProcessWindowFunction, WindowContext

__all__ = ["CoGroupWindowFunction"]


class CoGroupWindowFunction(ProcessWindowFunction[Any, Any, Any]):
    """Calls ``co_group(lefts, rights)`` with a firing window's records of each input.

    Each side keeps its records' arrival order; either list may be empty (a key whose
    window holds records of one side only).
    """

    def __init__(self, co_group: CoGroup) -> None:
        self.co_group = co_group

    def process(self, key: Any, context: WindowContext, elements: list[Any]) -> Iterable[Any]:
        """Split ``elements`` by input; return what ``co_group`` emits for them."""
        first: list[Any] = []
        second: list[Any] = []
        for element in elements:
            if type(element) is SecondInput:
                second.append(element.value)
            else:
                first.append(element)
        return self.co_group(first, second) or ()

    def __repr__(self) -> str:
        return f"<CoGroupWindowFunction {self.co_group!r}>"
