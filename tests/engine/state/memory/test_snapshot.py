from __future__ import annotations

import operator
from typing import Any

import pytest

from lockgate.engine.state import (
    AggregatingStateDescriptor,
    KeyedStateStore,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from lockgate.engine.state.key_groups import key_group_for
from tests.engine.state.states import MAX_PARALLELISM, Average, EveryState, flat

VALUE = ValueStateDescriptor[int]("value")
LIST = ListStateDescriptor[int]("list")
MAP = MapStateDescriptor[str, int]("map")
REDUCING = ReducingStateDescriptor[int]("reducing", operator.add)
AGGREGATING = AggregatingStateDescriptor("aggregating", Average())


class Job(EveryState):
    """A store with one state of every kind, written as a job would."""

    def __init__(self, store: KeyedStateStore | None = None) -> None:
        descriptors = (VALUE, LIST, MAP, REDUCING, AGGREGATING)
        super().__init__(store or KeyedStateStore(), descriptors)


def test_a_snapshot_holds_every_state_as_plain_values() -> None:
    job = Job()
    job.write("a", 1)
    job.write("a", 2)

    assert flat(job.store.snapshot()) == {
        "value": {"a": 2},
        "list": {"a": [1, 2]},
        "map": {"a": {"m1": 1, "m2": 2}},
        "reducing": {"a": 3},
        "aggregating": {"a": [3, 2]},
    }


def test_writes_after_a_snapshot_never_reach_it() -> None:
    job = Job()
    job.write("a", 1)
    snapshot = job.store.snapshot()
    before = flat(snapshot)

    job.write("a", 2)
    job.write("b", 3)

    assert flat(snapshot) == before


def test_clearing_and_removing_after_a_snapshot_never_reach_it() -> None:
    job = Job()
    job.write("a", 1)
    snapshot = job.store.snapshot()
    before = flat(snapshot)

    job.list.update([7])
    job.map.remove("m1")
    job.value.clear()
    job.reducing.clear()
    job.aggregating.clear()

    assert flat(snapshot) == before


def test_two_snapshots_each_restore_to_exactly_their_own_values() -> None:
    job = Job()
    job.write("a", 1)
    first = job.store.snapshot()
    job.write("a", 2)
    job.write("b", 5)
    second = job.store.snapshot()
    job.write("a", 3)

    restored_first = Job(restored(first.by_key_group(MAX_PARALLELISM)))
    restored_second = Job(restored(second.by_key_group(MAX_PARALLELISM)))

    assert restored_first.read("a") == (1, [1], {"m1": 1}, 1, 1.0)
    assert restored_first.store.key_count() == 1
    assert restored_second.read("a") == (2, [1, 2], {"m1": 1, "m2": 2}, 3, 1.5)
    assert restored_second.read("b") == (5, [5], {"m5": 5}, 5, 5.0)


def test_writes_after_a_restore_never_change_the_restored_data() -> None:
    job = Job()
    job.write("a", 1)
    groups = job.store.snapshot().by_key_group(MAX_PARALLELISM)
    restored_job = Job(restored(groups))

    restored_job.write("a", 2)

    assert Job(restored(groups)).read("a") == (1, [1], {"m1": 1}, 1, 1.0)


def test_writes_after_a_restore_into_declared_states_never_change_the_restored_data() -> None:
    job = Job()
    job.write("a", 1)
    groups = job.store.snapshot().by_key_group(MAX_PARALLELISM)
    declared = Job()
    declared.store.restore(groups)

    declared.write("a", 2)

    assert Job(restored(groups)).read("a") == (1, [1], {"m1": 1}, 1, 1.0)


def test_a_restored_state_is_found_by_a_descriptor_declared_later() -> None:
    job = Job()
    job.write("a", 1)
    store = restored(job.store.snapshot().by_key_group(MAX_PARALLELISM))

    later = Job(store)
    later.write("a", 2)

    assert later.read("a") == (2, [1, 2], {"m1": 1, "m2": 2}, 3, 1.5)


def test_a_restore_into_declared_states_loads_them_too() -> None:
    job = Job()
    job.write("a", 1)
    fresh = Job()

    fresh.store.restore(job.store.snapshot().by_key_group(MAX_PARALLELISM))
    fresh.write("a", 2)

    assert fresh.read("a") == (2, [1, 2], {"m1": 1, "m2": 2}, 3, 1.5)


def test_a_restored_but_undeclared_state_is_snapshotted_again() -> None:
    job = Job()
    job.write("a", 1)
    store = restored(job.store.snapshot().by_key_group(MAX_PARALLELISM))

    assert flat(store.snapshot()) == flat(job.store.snapshot())


def test_cleared_states_leave_nothing_in_a_snapshot() -> None:
    job = Job()
    job.write("a", 1)
    job.write("b", 2)
    job.store.current_key = "a"
    for state in (job.value, job.list, job.map, job.reducing, job.aggregating):
        state.clear()

    assert flat(job.store.snapshot()) == flat(only_b())


def test_a_store_with_everything_cleared_snapshots_no_key_group() -> None:
    job = Job()
    job.write("a", 1)
    job.list.update([])
    job.map.remove("m1")
    for state in (job.value, job.reducing, job.aggregating):
        state.clear()

    assert job.store.snapshot().by_key_group(MAX_PARALLELISM) == {}


def test_by_key_group_puts_every_key_in_its_key_group() -> None:
    job = Job()
    for key in range(50):
        job.write(key, key)

    groups = job.store.snapshot().by_key_group(MAX_PARALLELISM)

    assert all(
        key_group_for(key, MAX_PARALLELISM) == group
        for group, states in groups.items()
        for table in states.values()
        for key in table
    )


def test_a_restore_of_half_the_key_groups_sees_only_their_keys() -> None:
    job = Job()
    for key in range(200):
        job.write(key, key)
    groups = job.store.snapshot().by_key_group(MAX_PARALLELISM)
    half = {group: states for group, states in groups.items() if group < MAX_PARALLELISM // 2}

    store = restored(half)

    expected = {key for key in range(200) if key_group_for(key, MAX_PARALLELISM) < 64}
    assert set(store.table(VALUE)) == expected
    assert 0 < len(expected) < 200


def test_list_and_map_values_of_by_key_group_are_new_plain_containers() -> None:
    job = Job()
    job.write("a", 1)
    snapshot = job.store.snapshot()

    flat(snapshot)["list"]["a"].append(99)
    flat(snapshot)["map"]["a"]["x"] = 99

    assert job.read("a")[1:3] == ([1], {"m1": 1})
    assert type(flat(snapshot)["list"]["a"]) is list


def test_a_container_is_copied_once_per_snapshot_not_per_write() -> None:
    job = Job()
    job.write("a", 1)
    job.store.snapshot()
    copies = job.store.statistics().copies_on_write

    job.store.current_key = "a"
    for number in range(10):
        job.list.add(number)
        job.map.put("x", number)

    assert job.store.statistics().copies_on_write == copies + 2


def test_a_raw_table_taken_before_a_restore_sees_the_restored_values() -> None:
    job = Job()
    job.write("a", 1)
    store = KeyedStateStore()
    table = store.table(VALUE)

    store.restore(job.store.snapshot().by_key_group(MAX_PARALLELISM))

    assert table == {"a": 1}


def test_by_key_group_needs_a_positive_max_parallelism() -> None:
    with pytest.raises(ValueError, match="max_parallelism"):
        KeyedStateStore().snapshot().by_key_group(0)


def restored(groups: Any) -> KeyedStateStore:
    store = KeyedStateStore()
    store.restore(groups)
    return store


def only_b() -> Any:
    job = Job()
    job.write("b", 2)
    return job.store.snapshot()
