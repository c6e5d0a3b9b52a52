"""HeapAggregatingState: per key, an accumulator an ``AggregateFunction`` folds values into."""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from lockgate.engine.state.aggregate_function import AggregateFunction
from lockgate.engine.state.handles import AggregatingState
from lockgate.engine.state.memory.copy_on_write import CopyOnWriteState
from lockgate.engine.state.memory.versioned_table import VersionedTable
from lockgate.engine.state.scope import StateScope

__all__ = ["HeapAggregatingState"]

IN = TypeVar("IN")
OUT = TypeVar("OUT")


class HeapAggregatingState(CopyOnWriteState[Any], AggregatingState[IN, OUT]):
    """Per key, ``get_result`` of an accumulator that every added value was folded into.

    ``AggregateFunction.add`` may change the accumulator in place: the first ``add`` after a
    snapshot hands it a deep copy (``copy.deepcopy``) of the accumulator the snapshot holds,
    so snapshots never change and later adds in the same epoch touch no copy.
    """

    __slots__ = ("_function",)

    def __init__(
        self,
        scope: StateScope,
        table: VersionedTable,
        aggregate_function: AggregateFunction[IN, Any, OUT],
    ) -> None:
        super().__init__(scope, table)
        self._function = aggregate_function

    @staticmethod
    def to_plain(value: Any) -> Any:
        """Return the accumulator itself: the store never changes one a snapshot can see."""
        return value

    def get(self) -> OUT | None:
        """Return the result for the current key, or ``None`` if nothing was added."""
        accumulator = self._readable()
        return None if accumulator is None else self._function.get_result(accumulator)

    def add(self, value: IN) -> None:
        """Fold ``value`` into the current key's accumulator."""
        entry = self._writable()
        entry.value = self._function.add(value, entry.value)

    def _empty(self) -> Any:
        return self._function.create_accumulator()

    def _copy(self, value: Any) -> Any:
        return copy.deepcopy(value)
