"""TtlContainerState: list and aggregating states whose whole per-key container expires."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from lockgate.engine.state.aggregate_function import AggregateFunction
from lockgate.engine.state.memory.aggregating_state import HeapAggregatingState
from lockgate.engine.state.memory.copy_on_write import CopyOnWriteState
from lockgate.engine.state.memory.entry import FROZEN, StateEntry
from lockgate.engine.state.memory.list_state import HeapListState
from lockgate.engine.state.memory.versioned_table import VersionedTable
from lockgate.engine.state.scope import StateScope
from lockgate.engine.state.ttl import EXPIRED, TtlPolicy, TtlValue

__all__ = [
    "TtlAggregatingState",
    "TtlContainerState",
    "TtlListState",
    "export_aggregate",
    "export_list",
    "restore_container",
]

C = TypeVar("C")
V = TypeVar("V")
IN = TypeVar("IN")
OUT = TypeVar("OUT")


def export_list(stored: TtlValue[StateEntry[list[Any]]], now: float) -> Any:
    """Return a new plain list of a stored list, or ``EXPIRED`` if it expired by ``now``."""
    return list(stored.value.value) if stored.expires_at > now else EXPIRED


def export_aggregate(stored: TtlValue[StateEntry[Any]], now: float) -> Any:
    """Return a stored accumulator, or ``EXPIRED`` if it expired by ``now``."""
    return stored.value.value if stored.expires_at > now else EXPIRED


def restore_container(plain: Any, deadline: float) -> TtlValue[StateEntry[Any]]:
    """Return a restored container, owned by no epoch, stored to expire at ``deadline``."""
    return TtlValue(StateEntry(FROZEN, plain), deadline)


class TtlContainerState(CopyOnWriteState[C], Generic[C]):
    """Per-key containers in ``TtlValue(StateEntry)`` wrappers: the whole container expires.

    The ``StateEntry`` inside keeps the copy-on-write invariant of ``CopyOnWriteState``; the
    ``TtlValue`` around it is replaced, never changed, on every refresh, so a snapshot sees
    the deadline the entry had when it was taken.
    """

    __slots__ = ()  # subclasses hold ``_policy``: two bases may not both add slots

    _policy: TtlPolicy

    def _readable(self) -> C | None:
        stored: TtlValue[StateEntry[C]] | None = self._policy.read(
            self._table, self._scope.current_key
        )
        return None if stored is None else stored.value.value

    def _writable(self) -> StateEntry[C]:
        scope = self._scope
        stored: TtlValue[StateEntry[C]] | None = self._policy.live(self._table, scope.current_key)
        entry = None if stored is None else stored.value
        if entry is None:
            entry = StateEntry(scope.epoch, self._empty())
        elif entry.epoch != scope.epoch:
            entry = StateEntry(scope.epoch, self._copy(entry.value))
            scope.note_copy()
        self._table[scope.current_key] = self._policy.stamp(entry)
        return entry

    def _replace(self, value: C) -> None:
        entry = StateEntry(self._scope.epoch, value)
        self._table[self._scope.current_key] = self._policy.stamp(entry)


class TtlListState(TtlContainerState[list[V]], HeapListState[V]):
    """A ``ListState`` whose list expires as a whole, ``ttl`` after its last refresh."""

    __slots__ = ("_policy",)

    def __init__(self, scope: StateScope, table: VersionedTable, policy: TtlPolicy) -> None:
        super().__init__(scope, table)
        self._policy = policy


class TtlAggregatingState(TtlContainerState[Any], HeapAggregatingState[IN, OUT]):
    """An ``AggregatingState`` whose accumulator expires, ``ttl`` after its last refresh."""

    __slots__ = ("_policy",)

    def __init__(
        self,
        scope: StateScope,
        table: VersionedTable,
        aggregate_function: AggregateFunction[IN, Any, OUT],
        policy: TtlPolicy,
    ) -> None:
        super().__init__(scope, table, aggregate_function)
        self._policy = policy
