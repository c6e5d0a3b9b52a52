"""A RocksDB store restored from a RocksDB checkpoint's files, opened as its database."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from lockgate.engine.state import (
    ValueStateDescriptor,
)
from lockgate.engine.state.rocksdb.checkpoint import key_groups_in
from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore
from lockgate.engine.time.clock import ManualClock
from tests.engine.state.states import DESCRIPTORS, MAX_PARALLELISM, EveryState

RESTORES = ("files", "key_groups")


class Restorer:
    """Restores new stores (under ``root``) from a store's RocksDB checkpoint, both ways."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: list[RocksDBKeyedStateStore] = []

    def store(self, clock: ManualClock, **options: Any) -> RocksDBKeyedStateStore:
        store = RocksDBKeyedStateStore(self.root / f"db{len(self.made)}", clock, **options)
        self.made.append(store)
        return store

    def restore(
        self, source: RocksDBKeyedStateStore, clock: ManualClock, how: str = "files"
    ) -> RocksDBKeyedStateStore:
        """A new store with ``source``'s state, restored as ``how`` says."""
        checkpoint = source.native_snapshot()
        folder = checkpoint.seal()
        assert folder is not None
        restored = self.store(clock)
        if how == "files":
            restored.restore_native(
                self.downloaded(folder), checkpoint.description(), checkpoint.kinds
            )
        else:
            groups = key_groups_in(folder, checkpoint.description(), MAX_PARALLELISM)
            restored.restore(groups, checkpoint.kinds)
        checkpoint.discard()
        return restored

    def downloaded(self, folder: Path) -> Path:
        """A copy of ``folder``, as a restore downloads the files of a checkpoint."""
        copy = self.root / f"download{len(self.made)}"
        shutil.copytree(folder, copy)
        return copy

    def close_all(self) -> None:
        for store in self.made:
            store.close()


@pytest.fixture
def restorer(tmp_path: Path) -> Any:
    made = Restorer(tmp_path)
    yield made
    made.close_all()


def written(restorer: Restorer, clock: ManualClock, keys: int = 40) -> EveryState:
    states = EveryState(restorer.store(clock), DESCRIPTORS)
    for number in range(300):
        states.write(number % keys, number)
    return states


def test_a_store_restored_from_files_reads_every_state_as_the_checkpointed_one(
    restorer: Restorer,
) -> None:
    source = written(restorer, ManualClock())

    restored = EveryState(restorer.restore(source.store, ManualClock()), DESCRIPTORS)

    assert [restored.read(key) for key in range(40)] == [source.read(key) for key in range(40)]


def test_a_restore_from_files_moves_them_into_the_database_and_says_so(
    restorer: Restorer, tmp_path: Path
) -> None:
    source = written(restorer, ManualClock())

    restored = restorer.restore(source.store, ManualClock())

    assert restored.statistics().restore == "files"
    assert not any(tmp_path.glob("download*")), "the downloaded folder became the database"


@pytest.mark.parametrize(("how", "expected"), [("key_groups", "key_groups"), (None, "none")])
def test_a_store_restored_from_key_groups_or_not_restored_says_so(
    restorer: Restorer, how: str | None, expected: str
) -> None:
    source = written(restorer, ManualClock())

    store = (
        restorer.store(ManualClock())
        if how is None
        else restorer.restore(source.store, ManualClock(), how)
    )

    assert store.statistics().restore == expected


@pytest.mark.parametrize("how", RESTORES)
def test_values_with_a_ttl_live_a_full_ttl_from_the_restore_and_expired_ones_stay_gone(
    restorer: Restorer, how: str
) -> None:
    clock, later = ManualClock(), ManualClock(1_000.0)  # another process's monotonic clock
    states = EveryState(restorer.store(clock), DESCRIPTORS)
    states.write("old", 1)
    clock.advance(6.0)
    states.write("new", 2)
    clock.advance(4.0)  # "old" expires now, "new" in 6 s

    restored = EveryState(restorer.restore(states.store, later, how), DESCRIPTORS)
    seen = [restored.read(key)[:3] for key in ("old", "new")]
    later.advance(9.9)
    almost = restored.read("new")[:3]
    later.advance(0.1)

    assert seen == [(None, [1], {}), (2, [2], {"m2": 2})]
    assert almost == (2, [2], {"m2": 2})
    assert restored.read("new")[:3] == (None, [2], {})


@pytest.mark.parametrize("how", RESTORES)
def test_a_restored_store_snapshots_its_restored_and_its_new_state(
    restorer: Restorer, how: str
) -> None:
    source = written(restorer, ManualClock())
    restored = restorer.restore(source.store, ManualClock(), how)
    states = EveryState(restored, DESCRIPTORS)
    for number in range(300, 400):
        states.write(number % 60, number)

    checkpoint = restored.native_snapshot()

    folder = checkpoint.seal()
    assert folder is not None
    from_files = key_groups_in(folder, checkpoint.description(), MAX_PARALLELISM)
    assert from_files == restored.snapshot().by_key_group(MAX_PARALLELISM)
    assert len({key for states in from_files.values() for key in states["value"]}) == 60


def test_a_state_declared_after_a_restore_from_files_writes_under_an_id_of_its_own(
    restorer: Restorer,
) -> None:
    source = written(restorer, ManualClock())
    restored = restorer.restore(source.store, ManualClock())
    states = EveryState(restored, DESCRIPTORS)
    expected = [states.read(key) for key in range(40)]
    extra = restored.get_state(ValueStateDescriptor[str]("extra"))
    for key in range(40):
        restored.current_key = key
        extra.update(f"extra {key}")

    assert [states.read(key) for key in range(40)] == expected
    restored.current_key = 7
    assert extra.value() == "extra 7"


def test_files_of_keys_grouped_by_another_max_parallelism_are_refused(
    restorer: Restorer,
) -> None:
    source = written(restorer, ManualClock())
    checkpoint = source.store.native_snapshot()
    folder = checkpoint.seal()
    assert folder is not None
    store = restorer.store(ManualClock(), max_parallelism=64)

    with pytest.raises(ValueError, match="max parallelism 128, the store by 64"):
        store.restore_native(folder, checkpoint.description(), checkpoint.kinds)
