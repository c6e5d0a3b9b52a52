"""A RocksDB snapshot's window: nothing written at the barrier, the state of the barrier read.

Each test writes the same records into a RocksDB store and a heap store, takes both
snapshots at one barrier, writes on, and compares the RocksDB snapshot, read later, with
the heap's: the heap's snapshot is exact by copy on write of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockgate.engine.state import MapStateDescriptor
from lockgate.engine.state.memory.store import KeyedStateStore
from lockgate.engine.state.rocksdb import frozen as frozen_module
from lockgate.engine.state.rocksdb.checkpoint import key_groups_in
from lockgate.engine.state.rocksdb.options import RocksDBOptions
from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore
from lockgate.engine.time.clock import ManualClock
from tests.engine.state.states import DESCRIPTORS, MAX_PARALLELISM, EveryState, flat, flat_groups

CACHE = 100


class Both:
    """A RocksDB store with a cache of ``entries`` and a heap store, written alike."""

    def __init__(self, path: Path, entries: int) -> None:
        clock = ManualClock()
        options = RocksDBOptions(cache_entries=entries)
        self.rocksdb = RocksDBKeyedStateStore(path, clock, options=options)
        self.heap = KeyedStateStore(clock)
        self.states = [EveryState(store, DESCRIPTORS) for store in (self.rocksdb, self.heap)]

    def write(self, keys: range, number: int) -> None:
        for key in keys:
            for states in self.states:
                states.write(key, number + key)

    def snapshots(self) -> tuple[Any, dict[str, Any]]:
        """The RocksDB store's snapshot, unread, and the heap's, read."""
        return self.rocksdb.snapshot(), flat(self.heap.snapshot())

    def entries(self) -> int:
        return self.rocksdb.cache_statistics().entries


@pytest.fixture
def both(tmp_path: Path) -> Iterator[Both]:
    made = Both(tmp_path / "db", CACHE)
    yield made
    made.rocksdb.close()


def read_native(snapshot: Any) -> dict[str, Any]:
    folder = snapshot.seal()
    return flat_groups(key_groups_in(folder, snapshot.description(), MAX_PARALLELISM))


@pytest.mark.parametrize("native", [False, True])
def test_taking_a_snapshot_writes_nothing_to_rocksdb(tmp_path: Path, native: bool) -> None:
    both = Both(tmp_path / "db", 1_000)
    both.write(range(40), 0)

    snapshot = both.rocksdb.native_snapshot() if native else both.rocksdb.snapshot()

    statistics = both.rocksdb.cache_statistics()
    checkpoints = both.rocksdb._database.checkpoints_path
    assert (statistics.written, statistics.dirty) == (0, 5 * 40)
    assert not checkpoints.exists()  # no RocksDB checkpoint yet
    assert snapshot.entries >= 5 * 40
    both.rocksdb.close()


@pytest.mark.parametrize("native", [False, True])
def test_a_snapshot_read_after_more_writes_holds_the_state_at_its_barrier(
    tmp_path: Path, native: bool
) -> None:
    both = Both(tmp_path / "db", 1_000)
    both.write(range(40), 0)
    snapshot = both.rocksdb.native_snapshot() if native else both.rocksdb.snapshot()
    expected = flat(both.heap.snapshot())

    both.write(range(60), 100)  # lists and accumulators change in place, maps grow
    kept = both.rocksdb.cache_statistics().kept
    read = read_native(snapshot) if native else flat(snapshot)

    both.rocksdb.close()
    assert kept == 5 * 40 - 40  # every entry dirty at the barrier but the maps' new keys
    assert read == expected


def test_while_a_window_is_open_the_cache_evicts_nothing_up_to_twice_its_bound(
    both: Both,
) -> None:
    both.write(range(20), 0)  # 100 entries: the cache is full
    snapshot, expected = both.snapshots()

    both.write(range(20, 38), 0)  # 90 more
    during = both.rocksdb.cache_statistics()
    read = flat(snapshot)
    both.write(range(38, 39), 0)

    assert (during.entries, during.evictions, during.written) == (190, 0, 0)
    assert read == expected
    assert both.entries() < 190  # the window closed: eviction goes on
    assert both.rocksdb.cache_statistics().evictions > 0


def test_a_cache_twice_full_writes_the_window_back_itself_and_evicts(both: Both) -> None:
    both.write(range(20), 0)
    snapshot, expected = both.snapshots()
    most = 0

    for key in range(20, 80):
        both.write(range(key, key + 1), 0)
        most = max(most, both.entries())

    assert most <= 2 * CACHE
    assert both.rocksdb.cache_statistics().evictions > 0
    assert flat(snapshot) == expected


def test_a_map_cleared_while_a_window_is_open_stays_in_the_snapshot(both: Both) -> None:
    both.write(range(10), 0)
    snapshot, expected = both.snapshots()
    maps = [store.get_state(DESCRIPTORS[2]) for store in (both.rocksdb, both.heap)]

    for store, state in zip((both.rocksdb, both.heap), maps, strict=True):
        store.current_key = 3
        state.clear()  # it deletes in RocksDB itself: the window is written back first

    assert flat(snapshot) == expected
    assert maps[0].items() == [] and both.rocksdb.cache_statistics().written > 0
    assert flat(both.rocksdb.snapshot()) == flat(both.heap.snapshot())


def test_map_items_read_while_a_window_is_open_see_the_cache(both: Both) -> None:
    state = both.rocksdb.get_state(MapStateDescriptor[str, int]("plain"))
    both.rocksdb.current_key = "k"
    state.put("a", 1)
    snapshot = both.rocksdb.snapshot()
    state.put("b", 2)

    items = state.items()

    assert sorted(items) == [("a", 1), ("b", 2)]
    assert flat(snapshot)["plain"] == {"k": {"a": 1}}


def test_snapshots_read_in_reverse_order_each_hold_their_own_barrier(both: Both) -> None:
    both.write(range(10), 0)
    first, first_expected = both.snapshots()
    both.write(range(15), 100)
    second, second_expected = both.snapshots()
    both.write(range(20), 200)

    assert flat(second) == second_expected
    assert flat(first) == first_expected
    assert flat(both.rocksdb.snapshot()) == flat(both.heap.snapshot())


def test_a_snapshot_dropped_unread_leaves_no_window_open(both: Both) -> None:
    both.write(range(20), 0)
    both.rocksdb.snapshot()  # dropped at once, as an aborted checkpoint's capture is
    most = 0

    for key in range(20, 60):
        both.write(range(key, key + 1), 0)
        most = max(most, both.entries())

    assert most <= CACHE
    assert flat(both.rocksdb.snapshot()) == flat(both.heap.snapshot())


def test_a_store_closed_before_its_snapshot_was_read_leaves_the_snapshot_readable(
    tmp_path: Path,
) -> None:
    both = Both(tmp_path / "db", CACHE)
    both.write(range(10), 0)
    snapshot, expected = both.snapshots()
    both.write(range(10), 100)

    both.rocksdb.close()

    assert flat(snapshot) == expected


def test_a_snapshot_read_in_a_worker_thread_while_writes_go_on_holds_its_barrier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    both = Both(tmp_path / "db", 5_000)
    both.write(range(400), 0)
    snapshot, expected = both.snapshots()
    encoding, go = threading.Event(), threading.Event()
    shared = frozen_module.sharing_the_gil

    def held(items: Any, every: int = 64) -> Any:  # often: the writes interleave more
        encoding.set()
        go.wait(timeout=30)
        return shared(items, every)

    monkeypatch.setattr(frozen_module, "sharing_the_gil", held)
    read: list[dict[str, Any]] = []
    reader = threading.Thread(target=lambda: read.append(flat(snapshot)))
    reader.start()
    assert encoding.wait(timeout=30), "the window was never closed"
    both.write(range(200), 1_000)  # the worker waits: the event loop keeps these first
    go.set()
    number = 2_000
    while reader.is_alive():  # and these race with the worker's encoding
        both.write(range(400), number)
        number += 1_000
    reader.join()

    kept = both.rocksdb.cache_statistics().kept
    both.rocksdb.close()
    assert kept >= 5 * 200 - 200
    assert read == [expected]


def test_keys_rewritten_after_every_snapshot_are_listed_once(both: Both) -> None:
    rounds = []
    for round_ in range(3):
        both.write(range(10), round_ * 100)  # each round adds 10 map entries
        flat(both.rocksdb.snapshot())
        rounds.append(both.rocksdb.cache_statistics())

    assert [(each.listed, each.entries) for each in rounds] == [(50, 50), (60, 60), (70, 70)]
