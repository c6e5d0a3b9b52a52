"""What only the RocksDB keyed state store promises: state on disk, snapshots, its folder."""

from __future__ import annotations

import threading
import tracemalloc
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

import pytest

from lockgate.engine.state import (
    KeyedStateBackendSpec,
    ListStateDescriptor,
    MapStateDescriptor,
    RocksDBStateBackend,
    ValueStateDescriptor,
)
from lockgate.engine.state.backends import state_backend_for
from lockgate.engine.state.key_groups import key_group_for
from lockgate.engine.state.rocksdb.keys import decode_key, encode_key
from lockgate.engine.state.rocksdb.options import RocksDBOptions
from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore
from lockgate.engine.time.clock import SystemClock
from tests.engine.state.states import MAX_PARALLELISM, flat

VALUE = ValueStateDescriptor[int]("value")
MAP = MapStateDescriptor[Any, int]("map")


@pytest.fixture
def store(tmp_path: Path) -> Any:
    made = RocksDBKeyedStateStore(tmp_path / "db")
    yield made
    made.close()


def write_values(store: RocksDBKeyedStateStore, count: int, offset: int = 0) -> None:
    state = store.get_state(VALUE)
    for key in range(count):
        store.current_key = key
        state.update(key + offset)


def test_two_hundred_thousand_keys_live_on_disk_not_in_python_memory(tmp_path: Path) -> None:
    store = RocksDBKeyedStateStore(tmp_path / "db", options=RocksDBOptions(cache_entries=5_000))
    tracemalloc.start()
    try:
        write_values(store, 200_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    store.current_key = 123_456
    found = (store.get_state(VALUE).value(), store.key_count())
    store.close()
    # The heap store needs about 27 MB for the same keys; here only the bounded caches.
    assert (peak < 8_000_000, *found) == (True, 123_456, 200_000)


def test_a_snapshot_stays_as_it_was_while_writes_go_on_in_another_thread(store: Any) -> None:
    write_values(store, 5_000)
    snapshot = store.snapshot()
    result: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: result.update(flat(snapshot)))

    reader.start()
    write_values(store, 10_000, offset=1)
    store.get_state(VALUE).clear()
    reader.join()

    assert result == {"value": {key: key for key in range(5_000)}}


def test_close_deletes_the_database_folder(tmp_path: Path) -> None:
    store = RocksDBKeyedStateStore(tmp_path / "db")
    write_values(store, 10)
    existed = (tmp_path / "db").is_dir()
    store.close()
    assert (existed, (tmp_path / "db").exists()) == (True, False)


def test_a_store_without_keyed_state_never_creates_its_folder(tmp_path: Path) -> None:
    store = RocksDBKeyedStateStore(tmp_path / "db")
    store.snapshot().by_key_group(MAX_PARALLELISM)
    store.restore({})
    store.close()
    assert list(tmp_path.iterdir()) == []


def test_a_closed_store_refuses_new_states(tmp_path: Path) -> None:
    store = RocksDBKeyedStateStore(tmp_path / "db")
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.get_state(VALUE)


def test_a_folder_that_holds_a_database_is_never_reused(tmp_path: Path) -> None:
    first = RocksDBKeyedStateStore(tmp_path / "db")
    write_values(first, 1)
    second = RocksDBKeyedStateStore(tmp_path / "db")
    try:
        with pytest.raises(Exception, match=r"exists|lock"):
            write_values(second, 1)
    finally:
        first.close()


def test_a_raw_table_is_only_for_value_and_reducing_state(store: Any) -> None:
    with pytest.raises(TypeError, match="'items' is a list state"):
        store.table(ListStateDescriptor("items"))


def test_statistics_count_states_snapshots_and_estimate_entries(store: Any) -> None:
    write_values(store, 3)
    store.flush()  # the estimate counts what RocksDB holds, not the cache
    store.snapshot()
    stats = store.statistics()
    assert (stats.states, stats.entries, stats.snapshots) == (1, 3, 1)


def test_by_key_group_regroups_keys_for_another_max_parallelism(store: Any) -> None:
    write_values(store, 20)
    groups = store.snapshot().by_key_group(7)
    assert {(key, group) for group, states in groups.items() for key in states["value"]} == {
        (key, key_group_for(key, 7)) for key in range(20)
    }


# Keys: equal keys give equal bytes.


class Color(IntEnum):
    RED = 1


@dataclass(frozen=True)
class Point:
    x: int
    y: int


@pytest.mark.parametrize(
    "same", [(1, 1.0, True, Color.RED), ("a", "a"), ((1, "x"), (1.0, "x"), (True, "x"))]
)
def test_equal_keys_are_encoded_as_equal_bytes(same: tuple[Any, ...]) -> None:
    assert len({encode_key(key) for key in same}) == 1


@pytest.mark.parametrize(
    "key", ["é", "\ud800", b"\x00", -(2**70), 2.5, None, (1, ("a", b"b")), Point(1, 2)]
)
def test_a_key_decodes_to_what_it_equals(key: Any) -> None:
    assert decode_key(encode_key(key)) == key


def test_equal_keys_of_different_types_are_one_key(store: Any) -> None:
    state = store.get_state(VALUE)
    store.current_key = 1
    state.update(5)
    store.current_key = True
    assert state.value() == 5


def test_map_user_keys_of_any_deterministic_type_are_entries_of_their_own(store: Any) -> None:
    state = store.get_state(MAP)
    store.current_key = "k"
    state.put(Point(1, 2), 1)
    state.put((3, "x"), 2)
    assert (state.get(Point(1, 2)), sorted(state.values())) == (1, [1, 2])


# The backend that builds stores per operator subtask.


def spec(uid: str, index: int, attempt: int = 0) -> KeyedStateBackendSpec:
    return KeyedStateBackendSpec("job", "run1", attempt, uid, index, 128, SystemClock())


def test_each_operator_subtask_and_attempt_gets_a_folder_of_its_own(tmp_path: Path) -> None:
    backend = RocksDBStateBackend(tmp_path)
    stores = [
        backend.create_keyed_state_backend(s) for s in (spec("a", 0), spec("a", 1), spec("a", 0, 1))
    ]
    for made in stores:
        made.get_state(VALUE)
    names = sorted(path.name for path in tmp_path.iterdir())
    for made in stores:
        made.close()
    assert names == [
        "lockgate-job-run1-a0-a-0",
        "lockgate-job-run1-a0-a-1",
        "lockgate-job-run1-a1-a-0",
    ]


def test_an_unknown_state_backend_is_refused_naming_both() -> None:
    with pytest.raises(ValueError, match="'heap'; use 'memory' or 'rocksdb'"):
        state_backend_for("heap")


def test_the_rocksdb_backend_without_its_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "lockgate.engine.state.rocksdb.store", None)
    with pytest.raises(ImportError, match=r"pip install 'lockgate\[rocksdb\]'"):
        state_backend_for("rocksdb")
