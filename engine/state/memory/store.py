"""KeyedStateStore: the keyed state of one operator subtask, scoped to the current key."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar, overload

from lockgate.engine.state.backend import KeyedStateRestore, KeyedStateStatistics
from lockgate.engine.state.descriptors import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
    check_keyed,
)
from lockgate.engine.state.gil_share import sharing_the_gil
from lockgate.engine.state.handles import (
    AggregatingState,
    ListState,
    MapState,
    ReducingState,
    ValueState,
)
from lockgate.engine.state.memory.aggregating_state import HeapAggregatingState
from lockgate.engine.state.memory.entry import FROZEN, StateEntry
from lockgate.engine.state.memory.formats import to_plain_of, ttl_format_of
from lockgate.engine.state.memory.layers import Layers
from lockgate.engine.state.memory.list_state import HeapListState
from lockgate.engine.state.memory.map_state import HeapMapState
from lockgate.engine.state.memory.reducing_state import HeapReducingState
from lockgate.engine.state.memory.snapshot import KeyedStateSnapshot
from lockgate.engine.state.memory.ttl_container_state import TtlAggregatingState, TtlListState
from lockgate.engine.state.memory.ttl_map_state import TtlMapState
from lockgate.engine.state.memory.ttl_value_state import TtlReducingState, TtlValueState
from lockgate.engine.state.memory.value_state import HeapValueState
from lockgate.engine.state.memory.versioned_table import VersionedTable
from lockgate.engine.state.memory.versions import SnapshotVersion, SnapshotVersions
from lockgate.engine.state.state_kinds import StateKinds
from lockgate.engine.state.ttl import TtlPolicy
from lockgate.engine.time.clock import Clock, SystemClock

__all__ = ["FOLD_BUDGET", "KeyedStateStore"]

FOLD_BUDGET = 8_192
"""Entries a fold step moves at most: well under a millisecond of the event loop."""

V = TypeVar("V")
UK = TypeVar("UK")
UV = TypeVar("UV")
IN = TypeVar("IN")
ACC = TypeVar("ACC")
OUT = TypeVar("OUT")


class KeyedStateStore:
    """The keyed state of one operator subtask: a table per state name, keyed by key.

    Reads and writes go to the ``current_key``, which the operator sets before it calls the
    user function for a record. Keys are stored as they are; their key groups are computed
    only when a snapshot is split (``KeyedStateSnapshot.by_key_group``), never per record.

    Invariant: ``snapshot`` is consistent and takes O(states) time whatever the number of
    keys: each table (``VersionedTable``) freezes its layers as a version and starts a new
    live layer, and no write changes anything a version holds: values are replaced wholesale
    (so users must not change a value in place after storing it, as with Flink's heap
    backend), list, map and aggregating containers are copied on their first write after a
    snapshot, and both land in the live layer. ``fold`` merges the layers again, in bounded
    steps, changing frozen layers only once every snapshot holding them was released.
    Tables hold no empty entries: a cleared or emptied key is removed.

    States declared with a TTL (``descriptor.ttl``) read time from ``clock``. Their values
    expire ``ttl`` after their last refresh; expired values are never returned, are removed
    when accessed, and are left out of snapshots (judged at the time ``snapshot`` was called).
    Snapshots hold only plain values, no deadlines, because the clock is monotonic and its
    times mean nothing to another process: a restored value gets a full ``ttl`` from the
    moment it was restored. Statistics count expired entries that were not accessed yet.

    Each state's kind (``kind_of``) is recorded: snapshots carry ``kinds``, and declaring a
    restored state as another kind raises ``IncompatibleState`` naming ``owner``.
    """

    __slots__ = (
        "_clock",
        "_copies",
        "_declared",
        "_expiring",
        "_kinds",
        "_plain",
        "_policies",
        "_restore",
        "_restored_at",
        "_restorers",
        "_versions",
        "current_key",
        "epoch",
        "tables",
    )

    def __init__(self, clock: Clock | None = None, *, owner: str | None = None) -> None:
        """Read time (for TTLs) from ``clock``; ``owner`` names the operator in errors."""
        self.tables: dict[str, VersionedTable] = {}
        self.current_key: Any = None
        self.epoch = 0
        self._clock: Clock = SystemClock() if clock is None else clock
        self._declared: dict[str, StateDescriptor] = {}
        self._plain: dict[str, Callable[[Any], Any]] = {}
        self._expiring: dict[str, Callable[[Any, float], Any]] = {}
        self._restorers: dict[str, Callable[[Any, float], Any]] = {}
        self._policies: dict[str, TtlPolicy] = {}
        self._restored_at = 0.0
        self._restore: KeyedStateRestore = "none"
        self._copies = 0
        self._kinds = StateKinds(owner)
        self._versions = SnapshotVersions()

    @property
    def has_states(self) -> bool:
        """Whether any state was declared or restored."""
        return bool(self.tables) or bool(self._kinds.snapshot())

    def table(self, descriptor: StateDescriptor) -> VersionedTable:
        """Return the raw table behind ``descriptor``, declaring it on first use.

        A table restored before its declaration is found by name. Writers of a raw table
        must replace values wholesale; list, map and aggregating tables hold ``StateEntry``
        wrappers and are meant for their state handles only.

        Raises:
            ValueError: ``descriptor.name`` was declared before with another descriptor.
            IncompatibleState: the state was restored as another kind.
        """
        known = self._declared.get(descriptor.name)
        if known is None:
            return self._declare(descriptor)
        if known != descriptor:
            raise ValueError(
                f"state '{descriptor.name}' was declared twice, differently: {known} and "
                f"{descriptor}; give each state its own name"
            )
        return self.tables[descriptor.name]

    def value_state(self, descriptor: ValueStateDescriptor[V]) -> ValueState[V]:
        """Return the ``ValueState`` declared by ``descriptor``."""
        table = self.table(descriptor)
        if descriptor.ttl is not None:
            return TtlValueState(self, table, descriptor.default, self._policies[descriptor.name])
        return HeapValueState(self, table, descriptor.default)

    @overload
    def get_state(self, descriptor: ValueStateDescriptor[V]) -> ValueState[V]: ...
    @overload
    def get_state(self, descriptor: ListStateDescriptor[V]) -> ListState[V]: ...
    @overload
    def get_state(self, descriptor: MapStateDescriptor[UK, UV]) -> MapState[UK, UV]: ...
    @overload
    def get_state(self, descriptor: ReducingStateDescriptor[V]) -> ReducingState[V]: ...
    @overload
    def get_state(
        self, descriptor: AggregatingStateDescriptor[IN, ACC, OUT]
    ) -> AggregatingState[IN, OUT]: ...
    def get_state(self, descriptor: StateDescriptor) -> Any:
        """Return a handle on the state ``descriptor`` declares, scoped to ``current_key``.

        Handles are cheap to use per record; create them once, in ``open``.

        Raises:
            ValueError: the name was declared before with another descriptor.
            TypeError: ``descriptor`` is not one of the five keyed state descriptors.
            IncompatibleState: the state was restored as another kind.
        """
        check_keyed(descriptor)
        table = self.table(descriptor)
        if descriptor.ttl is not None:
            return self._ttl_state(descriptor, table)
        match descriptor:
            case ValueStateDescriptor():
                return HeapValueState(self, table, descriptor.default)
            case ListStateDescriptor():
                return HeapListState(self, table)
            case MapStateDescriptor():
                return HeapMapState(self, table)
            case ReducingStateDescriptor():
                return HeapReducingState(self, table, descriptor.reduce_function)
            case _:
                assert isinstance(descriptor, AggregatingStateDescriptor)
                return HeapAggregatingState(self, table, descriptor.aggregate_function)

    def key_count(self) -> int:
        """How many distinct keys hold state in any table."""
        keys: set[Any] = set()
        for table in self.tables.values():
            keys.update(table)
        return len(keys)

    def declared_states(self) -> Mapping[str, StateDescriptor]:
        """Every state declared so far, by name (restored states not declared yet are not)."""
        return dict(self._declared)

    def snapshot(self, *, copy: bool = False) -> KeyedStateSnapshot:
        """Take a consistent version of every table: the synchronous part of a checkpoint.

        O(states), whatever the number of keys: each table freezes its layers and starts a
        new live one, and a new epoch starts, so later writes copy the containers the
        snapshot shares. The snapshot holds its version until ``release``d (or collected).
        With ``copy``, it holds a shallow copy of each table instead, made now and linear in
        the keys (how snapshots were taken before versions; ``bench/snapshot_sync.py``
        measures both), and no version.
        """
        tables: dict[str, Layers]
        version: SnapshotVersion | None = None
        if copy:
            copies = ((name, table.copy()) for name, table in self.tables.items())
            tables = {name: (copied,) for name, copied in copies if copied}
        else:
            frozen = ((name, table.freeze()) for name, table in self.tables.items())
            tables = {name: layers for name, layers in frozen if layers}
            version = self._versions.take()
        plain = {name: self._plain[name] for name in tables.keys() & self._plain.keys()}
        self.epoch += 1
        kinds = self._kinds.snapshot()
        expiring = {name: self._expiring[name] for name in tables.keys() & self._expiring.keys()}
        time = self._clock.now() if expiring else 0.0
        return KeyedStateSnapshot(
            tables,
            plain,
            expiring=expiring,
            time=time,
            kinds=kinds,
            version=version,
            fold=self.fold,
        )

    def fold(self, budget: int = FOLD_BUDGET) -> bool:
        """Merge the tables' layers by about ``budget`` entries; return whether more can be done.

        Called on the event loop between batches, until it returns ``False``; layers that a
        held snapshot may read change only by being merged into a new dict.
        """
        held = self._versions.held() > 0
        done = 0
        for table in list(self.tables.values()):
            done += table.fold(budget - done, held=held)
            if done >= budget:
                return True
        return done > 0

    def restore(
        self,
        groups: Mapping[int, Mapping[str, Mapping[Any, Any]]],
        kinds: Mapping[str, str] | None = None,
    ) -> None:
        """Load key group -> state name -> key -> plain value, as ``by_key_group`` returns.

        Meant for a fresh store: every key of the given key groups is loaded, for any state
        name, declared or not (a later declaration finds its table). The given lists and
        dicts are never changed: the first write to a restored container copies it. Values of
        states with a TTL expire ``ttl`` after the restore (see the class docstring).
        ``kinds`` (state name -> kind) are remembered, and kept in later snapshots.

        Raises:
            IncompatibleState: a state was declared before as another kind.
        """
        self._kinds.restore(kinds or {})
        self._restored_at = self._clock.now()
        self._restore = "key_groups"
        for states in groups.values():
            for name, values in states.items():
                self._load(name, values)

    def note_copy(self) -> None:
        """Count one container copied on write (called by the state handles)."""
        self._copies += 1

    def statistics(self) -> KeyedStateStatistics:
        """Return the states and entries held, the snapshot counters, and how it was restored."""
        # A list first: a restore may add a table from a worker thread meanwhile.
        tables = list(self.tables.values())
        return KeyedStateStatistics(
            len(tables),
            sum(len(table) for table in tables),
            self.epoch,
            self._copies,
            self._restore,
            versions_held=self._versions.held(),
            frozen_layers=sum(table.frozen_layers for table in tables),
        )

    def close(self) -> None:
        """Release nothing: heap state goes with the store (``KeyedStateBackend`` asks it)."""

    def _ttl_state(self, descriptor: StateDescriptor, table: VersionedTable) -> Any:
        policy = self._policies[descriptor.name]
        match descriptor:
            case ValueStateDescriptor():
                return TtlValueState(self, table, descriptor.default, policy)
            case ListStateDescriptor():
                return TtlListState(self, table, policy)
            case MapStateDescriptor():
                return TtlMapState(self, table, policy)
            case ReducingStateDescriptor():
                return TtlReducingState(self, table, descriptor.reduce_function, policy)
            case _:
                assert isinstance(descriptor, AggregatingStateDescriptor)
                return TtlAggregatingState(self, table, descriptor.aggregate_function, policy)

    def _declare(self, descriptor: StateDescriptor) -> VersionedTable:
        self._kinds.declare(descriptor)
        self._declared[descriptor.name] = descriptor
        table = self._table(descriptor.name)
        if descriptor.ttl is not None:
            return self._declare_ttl(descriptor, descriptor.ttl.ttl, table)
        to_plain = to_plain_of(descriptor)
        if to_plain is not None:
            self._plain[descriptor.name] = to_plain
            # Values restored before the declaration are plain: entries no epoch owns.
            table.rewrite(partial(StateEntry, FROZEN))
        return table

    def _declare_ttl(
        self, descriptor: StateDescriptor, ttl: float, table: VersionedTable
    ) -> VersionedTable:
        assert descriptor.ttl is not None
        name = descriptor.name
        export, restorer = ttl_format_of(descriptor)
        self._policies[name] = TtlPolicy(descriptor.ttl, self._clock)
        self._expiring[name] = export
        self._restorers[name] = restorer
        # Values restored before the declaration are plain; they live ttl from the restore.
        deadline = self._restored_at + ttl
        table.rewrite(lambda value: restorer(value, deadline))
        return table

    def _table(self, name: str) -> VersionedTable:
        table = self.tables.get(name)
        if table is None:
            table = self.tables[name] = VersionedTable()
        return table

    def _load(self, name: str, values: Mapping[Any, Any]) -> None:
        live = self._table(name).live  # a restore fills a fresh store: nothing is frozen
        restorer = self._restorers.get(name)
        if restorer is not None:
            deadline = self._policies[name].deadline()
            items = sharing_the_gil(values.items())
            live.update((key, restorer(value, deadline)) for key, value in items)
        elif name in self._plain:
            items = sharing_the_gil(values.items())
            live.update((key, StateEntry(FROZEN, value)) for key, value in items)
        else:
            live.update(values)

    def __repr__(self) -> str:
        entries = sum(len(table) for table in self.tables.values())
        return (
            f"<KeyedStateStore states={sorted(self.tables)} entries={entries} "
            f"epoch={self.epoch} current_key={self.current_key!r}>"
        )
