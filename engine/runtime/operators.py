"""Operators: the runtime form of map, filter, flat_map, reduce and process.

Each operator turns a batch of records into a batch of records with one plain call, so a
chain of operators costs one Python call per operator per batch, plus the user function per
record. Keyed operators take each record's key with the stream's key selector.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from lockgate.engine.functions import KeyedProcessFunction, ProcessContext, RuntimeContext
from lockgate.engine.graph import OperatorKind, OperatorNode
from lockgate.engine.state import KeyedStateStore, ValueStateDescriptor

__all__ = ["Operator", "create_operator"]

_MISSING = object()
_REDUCED = ValueStateDescriptor[Any]("reduced")


class Operator:
    """One chained operator of a subtask: ``open``, ``process_batch`` per batch, ``close``."""

    def __init__(self, node: OperatorNode) -> None:
        self.uid = node.uid
        self.keyed_state = KeyedStateStore()

    def open(self, context: RuntimeContext) -> None:
        """Prepare to process; called once before the first batch."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Return the records to pass on for a batch of input records."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what ``open`` acquired; called once, also after a failure."""


class MapOperator(Operator):
    """Emits ``fn(record)`` for each record."""

    def __init__(self, node: OperatorNode) -> None:
        super().__init__(node)
        self._fn: Callable[[Any], Any] = node.function

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Apply the function to each record."""
        fn = self._fn
        return [fn(record) for record in records]


class FilterOperator(Operator):
    """Keeps the records for which the predicate holds."""

    def __init__(self, node: OperatorNode) -> None:
        super().__init__(node)
        self._predicate: Callable[[Any], bool] = node.function

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Keep the records the predicate accepts."""
        predicate = self._predicate
        return [record for record in records if predicate(record)]


class FlatMapOperator(Operator):
    """Emits every element of the iterable ``fn(record)`` returns."""

    def __init__(self, node: OperatorNode) -> None:
        super().__init__(node)
        self._fn: Callable[[Any], Any] = node.function

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Concatenate the function's results."""
        out: list[Any] = []
        extend = out.extend
        fn = self._fn
        for record in records:
            extend(fn(record))
        return out


class ReduceOperator(Operator):
    """Per key, keeps ``fn(previous, record)`` in keyed state and emits it."""

    def __init__(self, node: OperatorNode) -> None:
        super().__init__(node)
        self._fn: Callable[[Any, Any], Any] = node.function
        self._key_of = _key_selector(node)
        self._table = self.keyed_state.table(_REDUCED)

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Fold each record into its key's running value and emit the new value."""
        fn, key_of, table = self._fn, self._key_of, self._table
        out: list[Any] = []
        append = out.append
        for record in records:
            key = key_of(record)
            previous = table.get(key, _MISSING)
            value = record if previous is _MISSING else fn(previous, record)
            table[key] = value
            append(value)
        return out


class ProcessOperator(Operator):
    """Runs a ``KeyedProcessFunction`` with its state scoped to each record's key.

    Every subtask runs its own deep copy of the function object, as Flink runs its own
    deserialized copy, so attributes set in ``open`` are never shared between subtasks.
    """

    def __init__(self, node: OperatorNode) -> None:
        super().__init__(node)
        self._fn: KeyedProcessFunction[Any, Any, Any] = copy.deepcopy(node.function)
        self._key_of = _key_selector(node)
        self._context: ProcessContext[Any] = ProcessContext(self.keyed_state)

    def open(self, context: RuntimeContext) -> None:
        """Open the user function, which declares its state."""
        self._fn.open(context)

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Call the function per record under the record's key; collect what it emits."""
        out: list[Any] = []
        extend = out.extend
        store, key_of, context = self.keyed_state, self._key_of, self._context
        process_element = self._fn.process_element
        for record in records:
            store.current_key = key_of(record)
            emitted = process_element(record, context)
            if emitted is not None:
                extend(emitted)
        return out

    def close(self) -> None:
        """Close the user function."""
        self._fn.close()


def _key_selector(node: OperatorNode) -> Callable[[Any], Any]:
    assert node.key_selector is not None, f"operator '{node.uid}' was validated as keyed"
    return node.key_selector


_OPERATORS: dict[OperatorKind, type[Operator]] = {
    OperatorKind.MAP: MapOperator,
    OperatorKind.FILTER: FilterOperator,
    OperatorKind.FLAT_MAP: FlatMapOperator,
    OperatorKind.REDUCE: ReduceOperator,
    OperatorKind.PROCESS: ProcessOperator,
}


def create_operator(node: OperatorNode) -> Operator:
    """Build the runtime operator for a map, filter, flat_map, reduce or process node."""
    return _OPERATORS[node.kind](node)
