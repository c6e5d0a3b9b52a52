"""Rolling aggregates of a keyed stream: ``reduce`` and ``aggregate``, one result per record.

A state that reads ahead (RocksDB's: ``prefetch(records, key_of)``) first reads the values
of the batch's keys it does not cache, in one multi-get; the loop over the records is the
same for every backend.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, NoReturn

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.runtime.operators.base import Operator, key_selector
from lockgate.engine.runtime.operators.scope import OperatorScope
from lockgate.engine.state import (
    AggregateFunction,
    AggregatingStateDescriptor,
    KeyedStateBackend,
    ValueStateDescriptor,
)
from lockgate.engine.state.memory.layers import ABSENT
from lockgate.engine.state.memory.versioned_table import VersionedTable
from lockgate.engine.time.clock import Clock

__all__ = [
    "MISSES_FOR_LOOKUP",
    "MISSING",
    "AggregateOperator",
    "Mapping",
    "ReduceOperator",
    "prefetcher",
]

Prefetch = Callable[[list[Any], Callable[[Any], Any]], None]
"""A state's ``prefetch(records, key_of)``: reads ahead the values of the records' keys."""

MISSING = object()
"""No value yet for the key: a reduce starts from its first record."""
_NOTHING: dict[Any, Any] = {}  # never written: nothing is under another backend's table
_REDUCED = ValueStateDescriptor[Any]("reduced")
_AGGREGATED = "aggregated"


def prefetcher(state: object) -> Prefetch | None:
    """The state's ``prefetch``, if it reads ahead (RocksDB's); ``None`` for the heap's."""
    prefetch = getattr(state, "prefetch", None)
    return prefetch if callable(prefetch) else None


class ReduceOperator(Operator):
    """Per key, keeps ``fn(previous, record)`` in keyed state and emits it."""

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        super().__init__(node, restored, clock, keyed_state=keyed_state)
        self._fn: Callable[[Any, Any], Any] = self.function
        self._key_of = key_selector(node)
        self._table = self.keyed_state.table(_REDUCED)
        self._prefetch = prefetcher(self._table)
        self._by_lookup = False  # how the next batch is folded: see process_batch

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Fold each record into its key's running value and emit the new value.

        On the heap, a key's first record after a snapshot finds its value under the live
        layer (``below``); every write goes to the live layer, so no snapshot sees it. A
        batch is folded expecting its keys in the live layer (a subscript, cheapest when it
        hits) unless the batch before missed it often, then by lookups with a default
        (cheapest when they miss): the results are the same either way.
        """
        live, below = _layers(self._table)
        if self._prefetch is not None:
            self._prefetch(records, self._key_of)
        fold = _fold_by_lookup if self._by_lookup else _fold_expecting_hits
        out, misses = fold(self._fn, self._key_of, live, below, records)
        self._by_lookup = misses * MISSES_FOR_LOOKUP > len(records)
        return out

    @property
    def reads_ahead(self) -> bool:
        """Whether its state reads a batch's keys ahead (then no map is fused into it)."""
        return self._prefetch is not None

    def process_mapped(self, records: list[Any], mapping: Mapping) -> list[Any]:
        """``process_batch`` of the records ``mapping`` maps, with no list between the two.

        What ``mapping``'s function raises leaves through ``mapping.scope``, naming the map;
        the records before it have been folded, as the job fails either way.
        """
        live, below = _layers(self._table)
        fold = _fold_mapped_by_lookup if self._by_lookup else _fold_mapped_expecting_hits
        out, misses = fold(self._fn, self._key_of, live, below, records, mapping)
        self._by_lookup = misses * MISSES_FOR_LOOKUP > len(records)
        return out


@dataclass(frozen=True, slots=True)
class Mapping:
    """A map chained right before a reduce: its operator (whose function maps) and scope."""

    operator: Operator
    scope: OperatorScope

    def failed(self) -> NoReturn:
        """Raise the exception being handled as the map's, as its own ``with scope`` would."""
        with self.scope:
            raise
        raise AssertionError("unreachable: the scope raised")  # pragma: no cover


MISSES_FOR_LOOKUP = 8
"""A reduce's batch that misses the live layer for more than one record in this many folds
the next batch by lookups with a default: a failed subscript costs more than such a lookup,
a subscript that hits less."""


def _fold_expecting_hits(
    fn: Callable[[Any, Any], Any],
    key_of: Callable[[Any], Any],
    live: MutableMapping[Any, Any],
    below: Callable[[Any, Any], Any],
    records: list[Any],
) -> tuple[list[Any], int]:
    # The function is called outside the except clause, so its errors chain no KeyError;
    # ABSENT from the live layer is a tombstone: nothing is below it.
    out: list[Any] = []
    append = out.append
    misses = 0
    for record in records:
        key = key_of(record)
        try:
            previous = live[key]
        except KeyError:
            misses += 1
            previous = below(key, ABSENT)
        live[key] = value = record if previous is ABSENT else fn(previous, record)
        append(value)
    return out, misses


def _fold_mapped_expecting_hits(
    fn: Callable[[Any, Any], Any],
    key_of: Callable[[Any], Any],
    live: MutableMapping[Any, Any],
    below: Callable[[Any, Any], Any],
    records: list[Any],
    mapping: Mapping,
) -> tuple[list[Any], int]:
    # _fold_expecting_hits of each record as the map's function returns it.
    out: list[Any] = []
    append = out.append
    misses = 0
    map_fn = mapping.operator.function
    for raw in records:
        try:
            record = map_fn(raw)
        except BaseException:
            mapping.failed()
        key = key_of(record)
        try:
            previous = live[key]
        except KeyError:
            misses += 1
            previous = below(key, ABSENT)
        live[key] = value = record if previous is ABSENT else fn(previous, record)
        append(value)
    return out, misses


def _fold_mapped_by_lookup(
    fn: Callable[[Any, Any], Any],
    key_of: Callable[[Any], Any],
    live: MutableMapping[Any, Any],
    below: Callable[[Any, Any], Any],
    records: list[Any],
    mapping: Mapping,
) -> tuple[list[Any], int]:
    # _fold_by_lookup of each record as the map's function returns it.
    out: list[Any] = []
    append = out.append
    misses = 0
    map_fn = mapping.operator.function
    for raw in records:
        try:
            record = map_fn(raw)
        except BaseException:
            mapping.failed()
        key = key_of(record)
        previous = live.get(key, ABSENT)
        if previous is not ABSENT:
            value = fn(previous, record)
        else:
            misses += 1
            previous = below(key, ABSENT)
            value = record if previous is ABSENT else fn(previous, record)
        live[key] = value
        append(value)
    return out, misses


def _fold_by_lookup(
    fn: Callable[[Any, Any], Any],
    key_of: Callable[[Any], Any],
    live: MutableMapping[Any, Any],
    below: Callable[[Any, Any], Any],
    records: list[Any],
) -> tuple[list[Any], int]:
    out: list[Any] = []
    append = out.append
    misses = 0
    for record in records:
        key = key_of(record)
        previous = live.get(key, ABSENT)
        if previous is not ABSENT:
            value = fn(previous, record)
        else:
            misses += 1
            previous = below(key, ABSENT)
            value = record if previous is ABSENT else fn(previous, record)
        live[key] = value
        append(value)
    return out, misses


def _layers(
    table: MutableMapping[Any, Any],
) -> tuple[MutableMapping[Any, Any], Callable[[Any, Any], Any]]:
    # Where a batch writes, and where it reads what that misses: valid for one batch.
    if type(table) is VersionedTable:
        return table.live, table.fast_below()
    return table, _NOTHING.get


class AggregateOperator(Operator):
    """Per key, folds each record into an ``AggregateFunction``'s accumulator; emits its result.

    The accumulator lives in an ``AggregatingState`` named ``"aggregated"``, which hands
    ``add`` a copy of any accumulator a snapshot still holds: ``add`` may change it in place.
    """

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        super().__init__(node, restored, clock, keyed_state=keyed_state)
        function: AggregateFunction[Any, Any, Any] = self.function
        self._key_of = key_selector(node)
        self._state = self.keyed_state.get_state(
            AggregatingStateDescriptor[Any, Any, Any](_AGGREGATED, function)
        )
        self._prefetch = prefetcher(self._state)

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Add each record to its key's accumulator and emit the accumulator's result."""
        store, key_of, state = self.keyed_state, self._key_of, self._state
        if self._prefetch is not None:
            self._prefetch(records, key_of)
        add, result = state.add, state.get
        out: list[Any] = []
        append = out.append
        for record in records:
            store.current_key = key_of(record)
            add(record)
            append(result())
        return out
