"""RocksDB checkpoints of the keyed state store: files, reading them back, their folders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockgate.engine.state.backends import native_key_groups
from lockgate.engine.state.key_groups import key_group_for
from lockgate.engine.state.native_snapshot import is_native
from lockgate.engine.state.rocksdb.checkpoint import RocksDBCheckpointSnapshot, key_groups_in
from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore
from lockgate.engine.time.clock import ManualClock
from tests.engine.state.states import DESCRIPTORS, MAX_PARALLELISM, EveryState, flat_groups


@pytest.fixture
def store(tmp_path: Path) -> Any:
    made = RocksDBKeyedStateStore(tmp_path / "db", ManualClock())
    yield made
    made.close()


def read_back(snapshot: RocksDBCheckpointSnapshot, max_parallelism: int = MAX_PARALLELISM) -> Any:
    folder = snapshot.seal()  # what the cache held goes in first, as the checkpointer does
    assert folder is not None
    return key_groups_in(folder, snapshot.description(), max_parallelism)


def test_a_checkpoint_reads_back_as_the_key_groups_of_a_plain_snapshot(store: Any) -> None:
    states = EveryState(store, DESCRIPTORS)
    for number in range(300):
        states.write(number % 40, number)
    expected = store.snapshot().by_key_group(MAX_PARALLELISM)

    assert read_back(store.native_snapshot()) == expected


def test_a_checkpoint_leaves_out_values_expired_when_it_was_taken(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    store = RocksDBKeyedStateStore(tmp_path / "db", clock)
    states = EveryState(store, DESCRIPTORS)
    states.write("old", 1)
    clock.advance(6.0)
    states.write("new", 2)
    clock.advance(4.0)
    snapshot = store.native_snapshot()
    clock.advance(100.0)  # expiry is judged at the checkpoint's time, not when it is read

    plain = flat_groups(read_back(snapshot))
    store.close()
    assert (plain["value"], plain["map"], plain["list"]) == (
        {"new": 2},
        {"new": {"m2": 2}},
        {"old": [1], "new": [2]},
    )


def test_a_checkpoint_stays_as_it_was_while_writes_go_on(store: Any) -> None:
    states = EveryState(store, DESCRIPTORS)
    states.write("a", 1)
    snapshot = store.native_snapshot()
    states.write("a", 2)
    states.write("b", 3)

    assert flat_groups(read_back(snapshot))["list"] == {"a": [1]}


def test_only_sst_files_are_shareable_and_they_hold_the_flushed_memtable(store: Any) -> None:
    EveryState(store, DESCRIPTORS).write("a", 1)
    files = store.native_snapshot().files()

    shareable = [file.name for file in files if file.shareable]
    assert shareable and all(name.endswith(".sst") for name in shareable)
    assert {"CURRENT"} <= {file.name for file in files if not file.shareable}


def test_a_checkpoint_regroups_keys_for_another_max_parallelism(store: Any) -> None:
    state = store.get_state(DESCRIPTORS[0])
    for key in range(30):
        store.current_key = key
        state.update(key)

    groups = read_back(store.native_snapshot(), 7)

    assert {(key, group) for group, states in groups.items() for key in states["value"]} == {
        (key, key_group_for(key, 7)) for key in range(30)
    }


def test_discard_deletes_the_checkpoint_folder(store: Any) -> None:
    EveryState(store, DESCRIPTORS).write("a", 1)
    snapshot = store.native_snapshot()
    folder = snapshot.seal()
    assert folder is not None and folder.is_dir()

    snapshot.discard()

    assert not folder.exists()


def test_a_checkpoint_discarded_before_it_was_read_writes_nothing_and_takes_no_folder(
    store: Any,
) -> None:
    EveryState(store, DESCRIPTORS).write("a", 1)
    snapshot = store.native_snapshot()

    snapshot.discard()

    assert not store._database.checkpoints_path.exists()
    assert (store.cache_statistics().written, snapshot.files()) == (0, [])


def test_close_deletes_the_checkpoint_folders_left(tmp_path: Path) -> None:
    store = RocksDBKeyedStateStore(tmp_path / "db")
    EveryState(store, DESCRIPTORS).write("a", 1)
    store.native_snapshot()
    store.native_snapshot()

    store.close()

    assert list(tmp_path.iterdir()) == []


def test_a_store_that_never_opened_its_database_captures_no_files(tmp_path: Path) -> None:
    store = RocksDBKeyedStateStore(tmp_path / "db")
    store.restore({}, {"value": "value"})  # a state, yet nothing written
    snapshot = store.native_snapshot()
    store.close()

    assert (snapshot.files(), snapshot.by_key_group(MAX_PARALLELISM)) == ([], {})
    assert list(tmp_path.iterdir()) == []


def test_a_checkpoint_is_told_apart_from_a_plain_snapshot_without_reading_it(store: Any) -> None:
    EveryState(store, DESCRIPTORS).write("a", 1)
    assert (is_native(store.native_snapshot()), is_native(store.snapshot())) == (True, False)


def test_a_description_in_an_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="version 9"):
        key_groups_in(tmp_path, {"format": "lockgate-rocksdb-checkpoint", "version": 9}, 8)


def test_files_of_an_unknown_backend_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown backend 'leveldb'"):
        native_key_groups("leveldb", tmp_path, {}, 8)
