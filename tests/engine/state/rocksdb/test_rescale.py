"""RocksDB checkpoints' files made into the databases of subtasks at another parallelism.

Each new subtask takes the files of the old subtask with the largest overlap, deletes the
key groups it does not own and inserts those it owns from the other old subtasks' files:
afterwards it holds exactly its key groups, every value as it was.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from lockgate.engine.restore.redistribute import native_sources
from lockgate.engine.state import MapStateDescriptor, StateTtlConfig, ValueStateDescriptor
from lockgate.engine.state.key_groups import key_group_for, key_group_range
from lockgate.engine.state.rocksdb.checkpoint import RocksDBCheckpointSnapshot
from lockgate.engine.state.rocksdb.rescale import formats_agree, rescale_files
from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore
from lockgate.engine.testing import ManualClock
from tests.engine.state.states import DESCRIPTORS, EveryState, flat

MAX = 32
KEYS = 3_000


class Old:
    """The RocksDB checkpoints of an operator's subtasks, each holding its own keys."""

    def __init__(self, root: Path, parallelism: int, clock: ManualClock) -> None:
        self.root = root
        self.parallelism = parallelism
        self.expected: dict[int, tuple[Any, ...]] = {}
        self.stores: list[RocksDBKeyedStateStore] = []
        self.snapshots = [self._checkpoint(index, clock) for index in range(parallelism)]

    def _checkpoint(self, index: int, clock: ManualClock) -> RocksDBCheckpointSnapshot:
        store = RocksDBKeyedStateStore(self.root / f"old{index}", clock, max_parallelism=MAX)
        self.stores.append(store)
        every = EveryState(store, DESCRIPTORS)
        for key in owned(range(KEYS), index, self.parallelism):
            every.write(key, key)
            every.write(key, key + 1)
            self.expected[key] = every.read(key)
        return store.native_snapshot()

    def source(self, index: int) -> tuple[Path, dict[str, Any]]:
        snapshot = self.snapshots[index]
        folder = snapshot.seal()
        assert folder is not None
        return folder, snapshot.description()


def owned(keys: range, index: int, parallelism: int) -> list[int]:
    groups = key_group_range(index, MAX, parallelism)
    return [key for key in keys if key_group_for(key, MAX) in groups]


def rescaled(old: Old, new_parallelism: int, root: Path, clock: ManualClock) -> list[EveryState]:
    """The new subtasks' stores, each made of the old files ``native_sources`` names."""
    stores = []
    plan = native_sources([True] * old.parallelism, new_parallelism, MAX)
    for index, sources in enumerate(plan):
        assert sources.base is not None
        base, description = old.source(sources.base)
        copy = root / f"download{index}"
        shutil.copytree(base, copy)  # a download of its own: the base's files change
        others = [old.source(other) for other in sources.others]
        merged = rescale_files((copy, description), others, sources.key_groups, MAX)
        store = RocksDBKeyedStateStore(root / f"new{index}", clock, max_parallelism=MAX)
        store.restore_native(copy, merged, old.snapshots[0].kinds)
        stores.append(EveryState(store, DESCRIPTORS))
    return stores


@pytest.mark.parametrize(("before", "after"), [(2, 3), (3, 2), (1, 2), (2, 1)])
def test_each_new_subtask_holds_exactly_its_key_groups_with_every_value(
    tmp_path: Path, before: int, after: int
) -> None:
    clock = ManualClock()
    old = Old(tmp_path, before, clock)

    stores = rescaled(old, after, tmp_path, clock)

    for index, every in enumerate(stores):
        keys = owned(range(KEYS), index, after)
        states = flat(every.store.snapshot(), MAX)
        assert {name: sorted(table) for name, table in states.items()} == {
            state.name: keys for state in DESCRIPTORS
        }
        assert {key: every.read(key) for key in keys} == {key: old.expected[key] for key in keys}
        every.store.close()
    for store in old.stores:
        store.close()


def test_values_that_had_expired_stay_out_and_the_others_live_a_full_ttl(tmp_path: Path) -> None:
    clock = ManualClock()
    ttl = ValueStateDescriptor[int]("value", ttl=StateTtlConfig(10.0))
    stores = [
        RocksDBKeyedStateStore(tmp_path / f"old{index}", clock, max_parallelism=MAX)
        for index in range(2)
    ]
    for store, keys in zip(stores, (range(16), range(16, 32)), strict=True):
        state = store.get_state(ttl)
        for key in keys:
            store.current_key = key
            state.update(key)
        clock.advance(6.0)  # the first subtask's values expire at 10.0, the second's at 16.0
    snapshots = [store.native_snapshot() for store in stores]  # at 12.0
    sources = [(snapshot.seal(), snapshot.description()) for snapshot in snapshots]
    merged = rescale_files(sources[0], sources[1:], range(MAX), MAX)  # type: ignore[arg-type]
    restored = RocksDBKeyedStateStore(tmp_path / "new", clock, max_parallelism=MAX)
    restored.restore_native(sources[0][0], merged)  # type: ignore[arg-type]
    state = restored.get_state(ttl)
    clock.advance(9.0)  # 21.0: past 16.0, within a ttl of the restore

    alive = {}
    for key in range(32):
        restored.current_key = key
        alive[key] = state.value()

    assert alive == {key: None if key < 16 else key for key in range(32)}
    for store in [*stores, restored]:
        store.close()


def test_a_state_the_base_lacks_gets_an_id_of_its_own(tmp_path: Path) -> None:
    only_other = ValueStateDescriptor[str]("only_other")
    sources, stores = [], []
    for index, names in enumerate([("value",), ("only_other", "value")]):
        store = RocksDBKeyedStateStore(tmp_path / f"old{index}", max_parallelism=MAX)
        stores.append(store)
        for name in names:
            state = store.get_state(ValueStateDescriptor[Any](name))
            for key in range(index * 100, index * 100 + 10):
                store.current_key = key
                state.update(f"{name}-{key}")
        snapshot = store.native_snapshot()
        folder = snapshot.seal()
        assert folder is not None
        sources.append((folder, snapshot.description()))
    merged = rescale_files(sources[0], sources[1:], range(MAX), MAX)
    restored = RocksDBKeyedStateStore(tmp_path / "new", max_parallelism=MAX)
    restored.restore_native(sources[0][0], merged)
    restored.get_state(only_other)
    restored.get_state(ValueStateDescriptor[Any]("value"))

    states = flat(restored.snapshot(), MAX)

    assert sorted(states["value"]) == [*range(10), *range(100, 110)]
    assert states["only_other"] == {key: f"only_other-{key}" for key in range(100, 110)}
    for store in [*stores, restored]:
        store.close()


def test_a_map_restored_whole_in_one_subtask_and_declared_in_another_does_not_merge(
    tmp_path: Path,
) -> None:
    declared = RocksDBKeyedStateStore(tmp_path / "declared", max_parallelism=MAX)
    declared.get_state(MapStateDescriptor[str, int]("map"))
    undeclared = RocksDBKeyedStateStore(tmp_path / "undeclared", max_parallelism=MAX)
    undeclared.restore({0: {"map": {"k": {"a": 1}}}})  # of unknown kind: stored whole
    descriptions = [store.native_snapshot().description() for store in (declared, undeclared)]
    agree = (formats_agree(descriptions[:1]), formats_agree(descriptions))
    declared.close()
    undeclared.close()

    assert agree == (True, False)
