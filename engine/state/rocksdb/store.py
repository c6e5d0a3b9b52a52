"""RocksDBKeyedStateStore: the keyed state of one operator subtask, on disk in RocksDB.

Layout: one RocksDB database per operator subtask and attempt, one column family (the
default) for every state, and keys that begin with the key group, then a two-byte state id
(see ``rocksdb_keys``). A prefix rather than a column family per state, because with the key
group first a whole key group of every state is one contiguous key range: a snapshot is split
by key group in one ordered pass, and the seam for incremental checkpoints and rescaling
(ingesting or deleting whole key-group ranges, as Flink's RocksDB backend does within each of
its column families) needs no per-state bookkeeping. State ids are private to one database
and its RocksDB checkpoints: snapshots of key groups hold state names, and a RocksDB
checkpoint's description maps its ids to names. Every attempt starts from a new database:
an empty one, or (``restore_native``) a RocksDB checkpoint's files, with their ids.

Values are pickled (see ``rocksdb_values``); a map stores one entry per user key, so map
access never reads the whole map. In front of the database sits a write-back cache of hot
keys (``rocksdb.cache``): at most ``RocksDBOptions.cache_entries`` values as Python objects,
each with its encoded key, written back in batches on eviction and before every scan. The
state itself lives in RocksDB, and may be larger than memory.

Snapshots: ``snapshot`` freezes the cache's dirty entries (a copy of their list, see
``rocksdb.frozen``) and creates a RocksDB iterator, which pins the database version current
at that instant (memtables and SST files) at O(1) cost; ``by_key_group`` walks both later,
in a worker thread, the frozen entries encoded there as they were at the snapshot (the
event loop encodes first those it changes before). (``Rdict.snapshot()`` is not used:
rocksdict 0.3 iterates such snapshots over the live data.) Incremental checkpoints take
``native_snapshot`` instead: a RocksDB checkpoint (``rocksdict.Checkpoint``: a flush and hard
links to the immutable SST files, see ``rocksdb.checkpoint``) with the frozen entries, which
its asynchronous part writes into the checkpoint's own folder; the checkpointer uploads only
the files the last completed checkpoint did not have.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
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
from lockgate.engine.state.handles import (
    AggregatingState,
    ListState,
    MapState,
    ReducingState,
    ValueState,
)
from lockgate.engine.state.rocksdb.access import StateAccess
from lockgate.engine.state.rocksdb.cache import CacheStatistics, WriteBackCache
from lockgate.engine.state.rocksdb.checkpoint import RocksDBCheckpointSnapshot
from lockgate.engine.state.rocksdb.database import StateDatabase
from lockgate.engine.state.rocksdb.entries import StateEntries, state_entries
from lockgate.engine.state.rocksdb.keys import KeyCodec, unframe
from lockgate.engine.state.rocksdb.loader import StateLoader
from lockgate.engine.state.rocksdb.map_state import MapStateEntries, RocksDBMapState
from lockgate.engine.state.rocksdb.options import RocksDBOptions
from lockgate.engine.state.rocksdb.registry import StateRegistry
from lockgate.engine.state.rocksdb.restore import RestoredFiles
from lockgate.engine.state.rocksdb.snapshot import RocksDBKeyedStateSnapshot
from lockgate.engine.state.rocksdb.states import (
    RocksDBAggregatingState,
    RocksDBListState,
    RocksDBReducingState,
    RocksDBTable,
    RocksDBValueState,
)
from lockgate.engine.time.clock import Clock, SystemClock

__all__ = ["RocksDBKeyedStateStore"]

V = TypeVar("V")
UK = TypeVar("UK")
UV = TypeVar("UV")
IN = TypeVar("IN")
ACC = TypeVar("ACC")
OUT = TypeVar("OUT")

_TABLE_KINDS = ("value", "reducing")
_KEY_START = 4


class RocksDBKeyedStateStore:
    """The keyed state of one operator subtask in a RocksDB database: state larger than memory.

    Same surface and results as ``KeyedStateStore``: reads and writes go to ``current_key``;
    handles of all five kinds behave as the heap ones, TTL included (values are stored with
    their deadline, expired ones are never returned, are deleted when accessed and are left
    out of snapshots; restored values live a full ``ttl`` from the restore). As on the heap,
    a value read from the cache is the cached object: never change it in place after
    ``update``.

    Invariant: the database plus the write-back cache hold every state; ``snapshot`` captures
    them as they are at O(1) cost (the list of dirty entries, copied on write, and a window
    that its reader closes: the dirty entries are written back and RocksDB pinned then, in
    another thread, while writes go on). A value must not change in place but through its
    handle (a list's ``add``, an aggregate's ``add``), which keeps it for an open window
    first. The cache holds at most ``options.cache_entries`` entries, whatever the size of
    the state (twice that while a window is open). The database lives in the folder
    ``path`` (created on first use, or moved there from a RocksDB checkpoint's files by
    ``restore_native``; it must not hold a database already), and ``close`` deletes it.
    Keys are encoded as ``rocksdb_keys`` says: equal keys give equal bytes, and a map
    state's user keys of types other than str, bytes, int, float, bool, None and tuples
    must pickle to equal bytes whenever they are equal.
    """

    __slots__ = (
        "_cache",
        "_clock",
        "_codec",
        "_database",
        "_entries",
        "_registry",
        "_restore",
        "_restored_at",
        "_snapshots",
        "current_key",
    )

    def __init__(
        self,
        path: str | os.PathLike[str],
        clock: Clock | None = None,
        *,
        max_parallelism: int = 128,
        owner: str | None = None,
        options: RocksDBOptions | None = None,
    ) -> None:
        """Keep state in a database at ``path``; ``max_parallelism`` groups its keys.

        ``owner`` names the operator in error messages (e.g. ``"operator 'sums'"``);
        ``options`` tune the database and size the cache (the defaults if ``None``).
        """
        options = RocksDBOptions() if options is None else options
        self.current_key: Any = None
        self._clock: Clock = SystemClock() if clock is None else clock
        self._codec = KeyCodec(max_parallelism)
        self._database = StateDatabase(path, options=options)
        self._cache = WriteBackCache(self._database, options.cache_entries)
        self._registry = StateRegistry(self._database, self._codec, owner)
        self._entries: dict[bytes, StateEntries | MapStateEntries] = {}  # by state id
        self._restored_at = 0.0
        self._restore: KeyedStateRestore = "none"
        self._snapshots = 0

    @property
    def restored_at(self) -> float:
        """The clock time of the last ``restore`` (0.0 if none)."""
        return self._restored_at

    @property
    def has_states(self) -> bool:
        """Whether any state was declared or restored."""
        return bool(self._registry.formats)

    def table(self, descriptor: StateDescriptor) -> RocksDBTable[Any]:
        """Return key -> value of a value or reducing state, declaring it on first use.

        Raises:
            TypeError: ``descriptor`` declares a list, map or aggregating state.
            ValueError: the name was declared before with another descriptor.
            IncompatibleState: the state was restored as another kind.
        """
        kind = self._registry.declare(descriptor)
        if kind not in _TABLE_KINDS:
            raise TypeError(
                f"state '{descriptor.name}' is a {kind} state, which the RocksDB backend keeps "
                "in its own layout; use get_state() for it"
            )
        entries = self._values(descriptor)
        return RocksDBTable(entries, entries.access, self._codec.max_parallelism)

    def value_state(self, descriptor: ValueStateDescriptor[V]) -> ValueState[V]:
        """Return the ``ValueState`` declared by ``descriptor``."""
        return self.get_state(descriptor)

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

        Raises:
            ValueError: the name was declared before with another descriptor.
            TypeError: ``descriptor`` is not one of the five keyed state descriptors.
            IncompatibleState: the state was restored as another kind.
        """
        check_keyed(descriptor)
        self._registry.declare(descriptor)
        match descriptor:
            case ValueStateDescriptor():
                return RocksDBValueState(self._values(descriptor), self, descriptor.default)
            case ListStateDescriptor():
                return RocksDBListState(self._values(descriptor, items=True), self)
            case MapStateDescriptor():
                return RocksDBMapState(self._maps(descriptor), self)
            case ReducingStateDescriptor():
                reduce = descriptor.reduce_function
                return RocksDBReducingState(self._values(descriptor), self, reduce)
            case _:
                assert isinstance(descriptor, AggregatingStateDescriptor)
                function = descriptor.aggregate_function
                return RocksDBAggregatingState(self._values(descriptor), self, function)

    def key_count(self) -> int:
        """How many distinct keys hold state in any state (a pass over the database)."""
        self._cache.flush()
        count, group, frames = 0, b"", set[bytes]()
        for db_key, _ in self._database.scan():
            if db_key[:2] != group:
                count, group, frames = count + len(frames), db_key[:2], set()
            if db_key[2:_KEY_START] in self._registry.formats:
                frames.add(unframe(db_key, _KEY_START)[0])
        return count + len(frames)

    def declared_states(self) -> Mapping[str, StateDescriptor]:
        """Every state declared so far, by name (restored states not declared yet are not)."""
        return dict(self._registry.declared)

    def flush(self) -> int:
        """Write the cache's dirty entries to RocksDB in one batch; return how many."""
        return self._cache.flush()

    def snapshot(self) -> RocksDBKeyedStateSnapshot:
        """Take a consistent view of every state: the synchronous part of a checkpoint.

        It writes nothing back: it freezes the cache's dirty entries (a copy of their list)
        and opens a window, which ``by_key_group`` closes (see ``rocksdb.frozen``): it writes
        them back, then pins RocksDB with an iterator, O(1).
        """
        frozen = self._cache.freeze(self._database.snapshot_if_open)
        self._snapshots += 1
        return RocksDBKeyedStateSnapshot(
            None,
            self._registry.formats,
            max_parallelism=self._codec.max_parallelism,
            kinds=self._registry.kinds.snapshot(),
            entries=self._database.estimate_entries() + frozen.size,
            times=(self._clock.now(), self._restored_at),
            frozen=frozen,
        )

    def native_snapshot(self) -> RocksDBCheckpointSnapshot:
        """Take a RocksDB checkpoint of every state: the synchronous part of an incremental one.

        It freezes the cache's dirty entries and opens a window, which the checkpointer
        closes when it first lists the files (``seal``, in a worker thread): it writes them
        back, then flushes the memtables and hard-links the SST files into a folder of its
        own (``StateDatabase.checkpoint``); it uploads the files it has not uploaded before,
        then deletes the folder.
        """
        frozen = self._cache.freeze(self._database.checkpoint)
        self._snapshots += 1
        return RocksDBCheckpointSnapshot(
            None,
            self._registry.formats,
            max_parallelism=self._codec.max_parallelism,
            kinds=self._registry.kinds.snapshot(),
            entries=self._database.estimate_entries() + frozen.size,
            times=(self._clock.now(), self._restored_at),
            frozen=frozen,
        )

    def restore(
        self,
        groups: Mapping[int, Mapping[str, Mapping[Any, Any]]],
        kinds: Mapping[str, str] | None = None,
    ) -> None:
        """Load key group -> state name -> key -> plain value, as ``by_key_group`` returns.

        Meant for a fresh store. ``kinds`` (state name -> kind) are remembered: a later
        declaration of another kind raises ``IncompatibleState``. A state of unknown kind
        is stored one pickled value per key until it is declared. Values of states with a
        TTL expire ``ttl`` after the restore.

        Raises:
            IncompatibleState: a state was declared before as another kind.
        """
        registry = self._registry
        registry.kinds.restore(kinds or {})
        self._restored_at = self._clock.now()
        self._restore = "key_groups"
        for name in kinds or {}:
            registry.state_id(name)
        if not any(groups.values()):
            return
        loader = StateLoader(self._database.db, self._codec)
        for states in groups.values():
            for name, values in states.items():
                state_id = registry.state_id(name)
                loader.load(state_id, registry.formats[state_id].kind, values)
        loader.flush()

    def restore_native(
        self,
        folder: Path,
        description: Mapping[str, Any],
        kinds: Mapping[str, str] | None = None,
    ) -> None:
        """Take the files of a RocksDB checkpoint in ``folder`` as the database, as they are.

        Meant for a fresh store of the key-group range the files hold: those of a restore
        at an unchanged parallelism, or files a rescaling restore cut to the store's key
        groups (``rocksdb.rescale``). ``folder`` holds every file of a
        ``RocksDBCheckpointSnapshot`` that described itself as ``description`` (state ids,
        names, kinds and TTLs); it becomes the database (moved, so gone after), and no
        value is read or written again, but those of states with a TTL, which expire as
        ``restore`` makes them (see ``RestoredFiles``). ``kinds`` as ``restore`` takes them.

        Raises:
            ValueError: a description of another format or max parallelism.
            RuntimeError: the store's database was opened before.
        """
        files = RestoredFiles.described(description, self._codec.max_parallelism)
        registry = self._registry
        registry.kinds.restore(kinds or {})
        self._restored_at = self._clock.now()
        db, max_parallelism = self._database.open_from(folder), self._codec.max_parallelism
        files.keep_only(db, max_parallelism)
        files.restart_deadlines(db, max_parallelism)
        registry.adopt(files.formats, files.last_id)
        self._restore = "files"
        for name in kinds or {}:
            registry.state_id(name)

    def statistics(self) -> KeyedStateStatistics:
        """Return the states held, RocksDB's estimate of the entries, snapshots, the restore."""
        entries = self._database.estimate_entries()
        states = len(self._registry.formats)
        return KeyedStateStatistics(states, entries, self._snapshots, 0, self._restore)

    def cache_statistics(self) -> CacheStatistics:
        """Return what the write-back cache holds, read, evicted and wrote."""
        return self._cache.statistics()

    def close(self) -> None:
        """Close the database and delete its folder; the state is gone.

        Snapshots whose windows are still open are taken first (a pin of the database
        outlives its close); RocksDB checkpoints' folders go with the database.
        """
        self._cache.close()
        self._entries.clear()
        self._database.close()

    def _values(self, descriptor: StateDescriptor, *, items: bool = False) -> StateEntries:
        """The cached entries of a state stored one value per key (a list's: its items)."""
        state_id = self._registry.state_id(descriptor.name)
        known = self._entries.get(state_id)
        if known is None:
            known = self._entries[state_id] = state_entries(
                self._cache,
                self._access(state_id, descriptor),
                items=items,
                ttl=descriptor.ttl,
                clock=self._clock,
                scope=self,
            )
        assert isinstance(known, StateEntries), "a state id names one state of one kind"
        return known

    def _maps(self, descriptor: StateDescriptor) -> MapStateEntries:
        """The cached user entries of a map state."""
        state_id = self._registry.state_id(descriptor.name)
        known = self._entries.get(state_id)
        if known is None:
            access = self._access(state_id, descriptor)
            known = self._entries[state_id] = MapStateEntries(
                self._cache, access, ttl=descriptor.ttl, clock=self._clock, scope=self
            )
        assert isinstance(known, MapStateEntries), "a state id names one state of one kind"
        return known

    def _access(self, state_id: bytes, descriptor: StateDescriptor) -> StateAccess:
        db, settle = self._database.db, self._cache.settle
        return StateAccess(self, db, self._codec, state_id, descriptor.ttl, self._clock, settle)

    def __repr__(self) -> str:
        names = sorted(state.name for state in self._registry.formats.values())
        return (
            f"<RocksDBKeyedStateStore states={names} path={str(self._database.path)!r} "
            f"current_key={self.current_key!r} cache={self._cache!r}>"
        )
