"""The RocksDB store's write-back cache: hot keys' values in Python, written back in batches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockgate.engine.functions.timers import KeyedTimers
from lockgate.engine.state import (
    ListStateDescriptor,
    MapStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from lockgate.engine.state.rocksdb.access import StateAccess
from lockgate.engine.state.rocksdb.options import RocksDBOptions
from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore
from lockgate.engine.state.state_reader import read_state
from lockgate.engine.testing import ManualClock
from tests.engine.state.states import DESCRIPTORS, EveryState, flat

VALUE = ValueStateDescriptor[int]("value")
LIST = ListStateDescriptor[int]("list")
MAP = MapStateDescriptor[str, int]("map")
CACHE = 100


class Stores:
    """Makes RocksDB stores with a cache of ``CACHE`` entries (or as told), and closes them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: list[RocksDBKeyedStateStore] = []

    def new(self, *, entries: int = CACHE, clock: Any = None) -> RocksDBKeyedStateStore:
        path = self.root / f"db{len(self.made)}"
        options = RocksDBOptions(cache_entries=entries)
        self.made.append(RocksDBKeyedStateStore(path, clock, options=options))
        return self.made[-1]


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Stores]:
    made = Stores(tmp_path)
    yield made
    for store in made.made:
        store.close()


def write(store: RocksDBKeyedStateStore, keys: range, offset: int = 0) -> None:
    state = store.get_state(VALUE)
    for key in keys:
        store.current_key = key
        state.update(key + offset)


def read(store: RocksDBKeyedStateStore, keys: range) -> dict[int, int]:
    state = store.get_state(VALUE)
    found = {}
    for key in keys:
        store.current_key = key
        found[key] = state.value()
    return found


def test_reads_of_cached_keys_never_touch_rocksdb(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = stores.new()
    write(store, range(50))
    read(store, range(50))

    def refuse(self: StateAccess, db_key: bytes) -> None:
        raise AssertionError(f"a cached key was read from RocksDB: {db_key!r}")

    monkeypatch.setattr(StateAccess, "get", refuse)

    assert read(store, range(50)) == {key: key for key in range(50)}


def test_a_snapshot_writes_the_cache_back_in_one_batch_when_read_not_when_taken(
    stores: Stores,
) -> None:
    store = stores.new()
    for offset in range(3):
        write(store, range(50), offset)

    snapshot = store.snapshot()
    taken = store.cache_statistics()
    groups = flat(snapshot)

    read = store.cache_statistics()
    assert (taken.written, taken.dirty) == (0, 50)
    assert (read.written, read.dirty) == (50, 0)
    assert groups == {"value": {key: key + 2 for key in range(50)}}


def test_an_incremental_snapshot_holds_every_write_the_cache_held(stores: Stores) -> None:
    store = stores.new()
    write(store, range(50))

    snapshot = store.native_snapshot()
    try:
        groups = flat(snapshot)  # type: ignore[arg-type]
    finally:
        snapshot.discard()

    assert groups == {"value": {key: key for key in range(50)}}


def test_eviction_writes_back_what_it_evicts(stores: Stores) -> None:
    store = stores.new()
    write(store, range(1_000))
    evicted = store.cache_statistics()

    found = read(store, range(1_000))

    assert evicted.entries <= CACHE
    assert evicted.evictions == evicted.written >= 1_000 - CACHE
    assert found == {key: key for key in range(1_000)}


def test_the_cache_never_holds_more_entries_than_its_bound(stores: Stores) -> None:
    store = stores.new()
    sizes = []
    for key in range(1_000):
        write(store, range(key, key + 1))
        sizes.append(store.cache_statistics().entries)

    assert max(sizes) == CACHE


def test_a_hot_key_stays_cached_while_cold_keys_pass_through(stores: Stores) -> None:
    store = stores.new()
    state = store.get_state(VALUE)
    for cold in range(1, 10_001):
        store.current_key = 0
        state.update((state.value() or 0) + 1)
        store.current_key = cold
        state.value()

    # each cold key is read once; the hot one only the first time
    assert (store.cache_statistics().loads, read(store, range(1))) == (10_001, {0: 10_000})


@pytest.mark.parametrize("way", ["key groups", "files"])
def test_state_a_hundred_times_larger_than_the_cache_restores_exactly(
    stores: Stores, way: str
) -> None:
    written = EveryState(stores.new(clock=ManualClock()), DESCRIPTORS)
    for key in range(10_000):
        written.write(key, key)
        written.write(key, key + 1)
    expected = {key: written.read(key) for key in range(10_000)}
    store = stores.new(clock=ManualClock())

    if way == "files":
        files = written.store.native_snapshot()
        folder = files.seal()
        assert folder is not None
        store.restore_native(folder, files.description(), files.kinds)
    else:
        snapshot = written.store.snapshot()
        store.restore(snapshot.by_key_group(128), snapshot.kinds)

    restored = EveryState(store, DESCRIPTORS)
    assert {key: restored.read(key) for key in range(10_000)} == expected
    assert restored.store.cache_statistics().entries <= CACHE


def test_iterating_a_table_and_counting_keys_see_cached_writes(stores: Stores) -> None:
    store = stores.new()
    table = store.table(VALUE)
    for key in range(30):
        table[key] = key

    assert (sorted(table), len(table), store.key_count()) == (list(range(30)), 30, 30)


def test_map_views_see_cached_puts_and_removes(stores: Stores) -> None:
    store = stores.new()
    store.current_key = "k"
    state = store.get_state(MAP)
    state.put("a", 1)
    state.put("b", 2)
    store.snapshot()  # "a" and "b" are in RocksDB now
    state.remove("a")
    state.put("c", 3)

    assert (sorted(state.items()), state.is_empty()) == ([("b", 2), ("c", 3)], False)


def test_a_map_cleared_with_cached_entries_leaves_nothing_behind(stores: Stores) -> None:
    store = stores.new()
    store.current_key = "k"
    state = store.get_state(MAP)
    state.put("a", 1)
    store.snapshot()
    state.put("b", 2)

    state.clear()

    assert (state.items(), state.get("b"), flat(store.snapshot())) == ([], None, {})


def test_a_list_read_from_the_cache_is_a_copy(stores: Stores) -> None:
    store = stores.new()
    store.current_key = "k"
    state = store.get_state(LIST)
    state.add(1)

    state.get().append(2)

    assert state.get() == [1]


def test_query_state_reads_what_only_the_cache_holds(stores: Stores) -> None:
    store = stores.new()
    write(store, range(10), offset=5)

    value = read_state(store, "value", 3, owner="operator 'values'")

    assert (value, store.cache_statistics().written) == (8, 0)


def test_a_value_expired_in_the_cache_is_deleted_when_written_back(stores: Stores) -> None:
    clock = ManualClock()
    store = stores.new(clock=clock)
    state = store.get_state(ValueStateDescriptor[int]("value", ttl=StateTtlConfig(10.0)))
    store.current_key = "k"
    state.update(1)
    store.snapshot()  # in RocksDB, with its deadline
    clock.advance(11.0)

    expired = state.value()

    assert (expired, store.key_count()) == (None, 0)


class Reads:
    """Counts RocksDB's point reads of the store's states: single gets and multi-gets."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.single: list[bytes] = []
        self.multi: list[list[bytes]] = []
        get, get_many = StateAccess.get, StateAccess.get_many

        def counted_get(access: StateAccess, db_key: bytes) -> bytes | None:
            self.single.append(db_key)
            return get(access, db_key)

        def counted_get_many(access: StateAccess, db_keys: list[bytes]) -> list[bytes | None]:
            self.multi.append(db_keys)
            return get_many(access, db_keys)

        monkeypatch.setattr(StateAccess, "get", counted_get)
        monkeypatch.setattr(StateAccess, "get_many", counted_get_many)


def test_a_prefetch_reads_a_batchs_uncached_keys_in_one_multi_get(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = stores.new()
    write(store, range(1_000))  # keys 0..~900 were evicted
    table = store.table(VALUE)
    reads = Reads(monkeypatch)

    table.prefetch([(key,) for key in [*range(40), *range(40)]], lambda record: record[0])
    values = [table[key] for key in range(40)]

    assert ([len(keys) for keys in reads.multi], reads.single) == ([40], [])
    assert values == list(range(40))


def test_a_prefetch_looks_at_no_key_while_the_batches_keys_were_cached(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = stores.new()
    table = store.table(VALUE)
    records = [(key,) for key in range(40)]
    table.prefetch(records, lambda record: record[0])  # reads them: they are absent
    reads, looked = Reads(monkeypatch), []

    for _ in range(3):
        table.prefetch(records, lambda record: looked.append(record) or record[0])
        for key in range(40):
            table[key] = table.get(key, 0) + 1

    assert (reads.multi, reads.single, looked, table[7]) == ([], [], records, 3)


def test_timers_kept_through_a_tiny_cache_are_all_found_again(stores: Stores) -> None:
    store = stores.new(entries=2)
    timers = KeyedTimers(store)
    for key in range(100):
        timers.event_time.register(key, float(key % 7))

    found = KeyedTimers(store)  # as a restored operator builds its queues from the tables

    assert len(found.event_time) == 100
    assert sorted(found.event_time.pop_due(0.0)) == [(key, 0.0) for key in range(0, 100, 7)]
