"""Both keyed state backends, memory and RocksDB, give the same results for the same calls."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockgate.engine.errors import IncompatibleState
from lockgate.engine.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueState,
    ValueStateDescriptor,
)
from lockgate.engine.state.key_groups import key_group_for
from lockgate.engine.testing import ManualClock
from tests.engine.state.backends import BACKENDS, Stores
from tests.engine.state.states import MAX_PARALLELISM, Average, EveryState, flat, flat_groups

VALUE = ValueStateDescriptor[int]("value")
LIST = ListStateDescriptor[int]("list")
MAP = MapStateDescriptor[str, int]("map")
REDUCING = ReducingStateDescriptor[int]("reducing", operator.add)
AGGREGATING = AggregatingStateDescriptor("aggregating", Average())
EVERY = (VALUE, LIST, MAP, REDUCING, AGGREGATING)

TTL = StateTtlConfig(10.0)
TTL_EVERY = (
    ValueStateDescriptor[int]("value", ttl=TTL),
    ListStateDescriptor[int]("list", ttl=TTL),
    MapStateDescriptor[str, int]("map", ttl=TTL),
    ReducingStateDescriptor[int]("reducing", operator.add, ttl=TTL),
    AggregatingStateDescriptor("aggregating", Average(), ttl=TTL),
)


@pytest.fixture(params=BACKENDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    made = Stores(request.param, tmp_path)
    yield made
    made.close_all()


def keyed(stores: Stores, descriptor: Any, key: Any = "a", clock: Any = None) -> Any:
    store = stores.new(clock)
    store.current_key = key
    return store.get_state(descriptor)


def every(stores: Stores, clock: Any = None, descriptors: tuple[Any, ...] = EVERY) -> EveryState:
    return EveryState(stores.new(clock), descriptors)


def restore(stores: Stores, groups: Any, clock: Any = None, **kinds: str) -> EveryState:
    job = every(stores, clock)
    job.store.restore(groups, kinds or None)
    return job


# Handles of every kind: get, put and clear.


@pytest.mark.parametrize(
    ("descriptor", "kind"),
    [
        (VALUE, ValueState),
        (LIST, ListState),
        (MAP, MapState),
        (REDUCING, ReducingState),
        (AGGREGATING, AggregatingState),
    ],
)
def test_get_state_returns_the_state_type_its_descriptor_declares(
    stores: Stores, descriptor: Any, kind: type
) -> None:
    assert isinstance(stores.new().get_state(descriptor), kind)


def test_value_state_returns_the_default_until_updated(stores: Stores) -> None:
    state = keyed(stores, ValueStateDescriptor[int]("count", default=0))
    before = state.value()
    state.update(5)
    assert (before, state.value()) == (0, 5)


def test_value_state_keeps_one_value_per_key(stores: Stores) -> None:
    job = every(stores)
    job.write("a", 1)
    job.write("b", 2)
    assert (job.read("a")[0], job.read("b")[0]) == (1, 2)


def test_updating_a_value_state_to_none_or_clearing_it_removes_the_key(stores: Stores) -> None:
    state = keyed(stores, VALUE)
    state.update(1)
    state.update(None)
    assert state.value() is None


def test_list_state_appends_in_order_and_returns_a_copy(stores: Stores) -> None:
    state = keyed(stores, LIST)
    state.add(1)
    state.add_all([2, 3])
    state.get().append(99)
    assert state.get() == [1, 2, 3]


def test_list_state_update_replaces_and_an_empty_update_clears(stores: Stores) -> None:
    state = keyed(stores, LIST)
    state.add(1)
    state.update([7, 8])
    replaced = state.get()
    state.update([])
    assert (replaced, state.get()) == ([7, 8], [])


def test_list_state_clear_removes_the_key(stores: Stores) -> None:
    state = keyed(stores, LIST)
    state.add(1)
    state.clear()
    assert state.get() == []


def test_map_state_puts_gets_and_checks_user_keys(stores: Stores) -> None:
    state = keyed(stores, MAP)
    state.put("x", 1)
    state.put_all({"y": 2, "z": 3})
    assert (state.get("x"), state.get("nope"), state.contains("y"), state.contains("w")) == (
        1,
        None,
        True,
        False,
    )


def test_map_state_views_list_every_entry(stores: Stores) -> None:
    state = keyed(stores, MAP)
    state.put_all({"y": 2, "x": 1})
    assert (sorted(state.keys()), sorted(state.values()), sorted(state.items())) == (
        ["x", "y"],
        [1, 2],
        [("x", 1), ("y", 2)],
    )


def test_map_state_removing_the_last_user_key_removes_the_key(stores: Stores) -> None:
    state = keyed(stores, MAP)
    state.put("x", 1)
    state.remove("absent")
    state.remove("x")
    assert (state.is_empty(), state.items()) == (True, [])


def test_map_state_clear_removes_every_entry(stores: Stores) -> None:
    state = keyed(stores, MAP)
    state.put_all({"x": 1, "y": 2})
    state.clear()
    assert state.is_empty()


def test_reducing_state_is_none_until_added_then_folds(stores: Stores) -> None:
    state = keyed(stores, REDUCING)
    before = state.get()
    state.add(2)
    state.add(3)
    assert (before, state.get()) == (None, 5)


def test_reducing_state_clear_starts_over(stores: Stores) -> None:
    state = keyed(stores, REDUCING)
    state.add(2)
    state.clear()
    state.add(3)
    assert state.get() == 3


def test_aggregating_state_returns_the_result_of_its_accumulator(stores: Stores) -> None:
    state = keyed(stores, AGGREGATING)
    before = state.get()
    state.add(2)
    state.add(4)
    assert (before, state.get()) == (None, 3.0)


def test_aggregating_state_clear_starts_a_new_accumulator(stores: Stores) -> None:
    state = keyed(stores, AGGREGATING)
    state.add(2)
    state.clear()
    state.add(10)
    assert state.get() == 10.0


def test_a_raw_table_and_a_value_state_see_the_same_values(stores: Stores) -> None:
    store = stores.new()
    table = store.table(VALUE)
    state = store.get_state(VALUE)
    table["a"] = 1
    store.current_key = "a"
    assert (state.value(), table.get("a"), table.get("b", "none")) == (1, 1, "none")


def test_key_count_counts_keys_holding_any_state(stores: Stores) -> None:
    job = every(stores)
    job.write("a", 1)
    job.write("b", 2)
    job.store.current_key = "c"
    job.map.put("x", 1)
    assert job.store.key_count() == 3


def test_declaring_a_name_twice_differently_fails_naming_it(stores: Stores) -> None:
    store = stores.new()
    store.get_state(ValueStateDescriptor("count", default=0))
    with pytest.raises(ValueError, match="state 'count' was declared twice, differently"):
        store.get_state(ValueStateDescriptor("count", default=1))


# Snapshots and restores.


def test_a_snapshot_holds_every_state_as_plain_values(stores: Stores) -> None:
    job = every(stores)
    job.write("a", 1)
    job.write("a", 2)
    assert flat(job.store.snapshot()) == {
        "value": {"a": 2},
        "list": {"a": [1, 2]},
        "map": {"a": {"m1": 1, "m2": 2}},
        "reducing": {"a": 3},
        "aggregating": {"a": [3, 2]},
    }


def test_two_snapshots_each_restore_to_exactly_their_own_values(stores: Stores) -> None:
    job = every(stores)
    job.write("a", 1)
    first = job.store.snapshot()
    job.write("a", 2)
    job.write("b", 3)
    job.store.current_key = "a"
    job.map.remove("m1")
    second = job.store.snapshot()

    restored = [restore(stores, s.by_key_group(MAX_PARALLELISM)) for s in (first, second)]

    assert [(r.read("a"), r.read("b")) for r in restored] == [
        ((1, [1], {"m1": 1}, 1, 1.0), (None, [], {}, None, None)),
        ((2, [1, 2], {"m2": 2}, 3, 1.5), (3, [3], {"m3": 3}, 3, 3.0)),
    ]


def test_an_accumulator_changed_in_place_after_a_snapshot_does_not_change_it(
    stores: Stores,
) -> None:
    job = every(stores)
    job.write("a", 1)
    snapshot = job.store.snapshot()
    job.write("a", 5)
    assert flat(snapshot)["aggregating"] == {"a": [1, 1]}


def test_clearing_every_state_leaves_nothing(stores: Stores) -> None:
    job = every(stores)
    job.write("a", 1)
    job.store.current_key = "a"
    job.list.update([])
    job.map.remove("m1")
    for state in (job.value, job.reducing, job.aggregating):
        state.clear()
    snapshot = job.store.snapshot()
    assert (job.store.key_count(), snapshot.by_key_group(MAX_PARALLELISM)) == (0, {})
    assert snapshot.state_names == frozenset()


def test_a_snapshot_names_the_states_holding_keys(stores: Stores) -> None:
    job = every(stores)
    job.store.current_key = "a"
    job.list.add(1)
    snapshot = job.store.snapshot()
    assert (snapshot.state_names, snapshot.entries) == (frozenset({"list"}), 1)


def test_a_snapshot_puts_every_key_in_its_key_group(stores: Stores) -> None:
    job = every(stores)
    for key in range(50):
        job.write(key, key)
    groups = job.store.snapshot().by_key_group(MAX_PARALLELISM)
    assert {(key, group) for group, states in groups.items() for key in states["value"]} == {
        (key, key_group_for(key, MAX_PARALLELISM)) for key in range(50)
    }


def test_a_restore_of_half_the_key_groups_sees_only_their_keys(stores: Stores) -> None:
    job = every(stores)
    for key in range(200):
        job.write(key, key)
    groups = job.store.snapshot().by_key_group(MAX_PARALLELISM)
    half = {group: states for group, states in groups.items() if group < MAX_PARALLELISM // 2}

    restored = restore(stores, half)

    expected = {key for key in range(200) if key_group_for(key, MAX_PARALLELISM) < 64}
    assert set(flat(restored.store.snapshot())["map"]) == expected
    assert restored.read(sorted(expected)[0])[2] == {f"m{sorted(expected)[0]}": sorted(expected)[0]}
    assert restored.store.key_count() == len(expected)


def test_a_state_restored_before_its_declaration_is_found_by_it(stores: Stores) -> None:
    job = every(stores)
    job.write("a", 1)
    store = stores.new()
    store.restore(job.store.snapshot().by_key_group(MAX_PARALLELISM))
    later = EveryState(store, EVERY)
    assert later.read("a") == (1, [1], {"m1": 1}, 1, 1.0)


def test_a_restored_but_undeclared_state_is_snapshotted_again(stores: Stores) -> None:
    store = stores.new()
    store.restore({0: {"old": {"a": [1, 2]}}})
    assert flat(store.snapshot()) == {"old": {"a": [1, 2]}}


def test_a_snapshot_records_declared_and_restored_kinds(stores: Stores) -> None:
    store = stores.new()
    store.restore({}, {"old": "map"})
    store.get_state(LIST)
    assert store.snapshot().kinds == {"old": "map", "list": "list"}


# Kinds of restored states.


def test_declaring_a_restored_state_as_another_kind_names_both_and_the_owner(
    stores: Stores,
) -> None:
    store = stores.new(owner="operator 'sums'")
    store.restore({0: {"count": {"a": [1]}}}, {"count": "list"})
    with pytest.raises(IncompatibleState) as raised:
        store.get_state(ValueStateDescriptor[int]("count"))
    message = str(raised.value)
    assert "operator 'sums'" in message
    assert "state 'count' was restored as list state but is declared as value state" in message
    assert "declare it as list state as before, or give the new value state another name" in (
        message
    )


def test_a_raw_table_of_another_kind_than_restored_is_refused(stores: Stores) -> None:
    store = stores.new()
    store.restore({}, {"reduced": "map"})
    with pytest.raises(IncompatibleState, match="'reduced'"):
        store.table(ValueStateDescriptor("reduced"))


def test_restoring_a_declared_state_as_another_kind_is_refused(stores: Stores) -> None:
    store = stores.new()
    store.get_state(MAP)
    with pytest.raises(IncompatibleState, match="state 'map' was restored as value state"):
        store.restore({}, {"map": "value"})


def test_declaring_a_restored_state_as_its_kind_loads_it(stores: Stores) -> None:
    groups = {key_group_for("a", MAX_PARALLELISM): {"map": {"a": {"x": 1}}}}
    job = restore(stores, groups, map="map")
    assert job.read("a")[2] == {"x": 1}


# TTL.


def ttl_job(stores: Stores, clock: ManualClock) -> EveryState:
    return every(stores, clock, TTL_EVERY)


def test_values_expire_at_their_ttl_and_read_as_absent(stores: Stores) -> None:
    clock = ManualClock()
    job = ttl_job(stores, clock)
    job.write("a", 1)
    clock.advance(9.9)
    alive = job.read("a")
    clock.advance(0.1)
    assert (alive, job.read("a")) == ((1, [1], {"m1": 1}, 1, 1.0), (None, [], {}, None, None))


def test_an_expired_value_is_removed_when_accessed(stores: Stores) -> None:
    clock = ManualClock()
    job = ttl_job(stores, clock)
    job.write("a", 1)
    clock.advance(10.0)
    job.read("a")
    assert job.store.key_count() == 0


def test_a_write_refreshes_a_value_and_adding_to_an_expired_list_starts_over(
    stores: Stores,
) -> None:
    clock = ManualClock()
    job = ttl_job(stores, clock)
    job.write("a", 1)
    clock.advance(10.0)
    job.write("a", 2)
    clock.advance(9.0)
    assert job.read("a") == (2, [2], {"m2": 2}, 2, 2.0)


def test_a_read_refreshes_with_on_read_and_write(stores: Stores) -> None:
    clock = ManualClock()
    ttl = StateTtlConfig(10.0, update_type="on_read_and_write")
    state = keyed(stores, MapStateDescriptor[str, int]("m", ttl=ttl), clock=clock)
    state.put("x", 1)
    state.put("y", 2)
    clock.advance(6.0)
    state.get("x")
    clock.advance(6.0)
    assert state.items() == [("x", 1)]


def test_map_entries_expire_one_by_one(stores: Stores) -> None:
    clock = ManualClock()
    state = keyed(stores, TTL_EVERY[2], clock=clock)
    state.put("old", 1)
    clock.advance(6.0)
    state.put("new", 2)
    clock.advance(4.0)
    assert (state.items(), state.contains("old"), state.get("old")) == ([("new", 2)], False, None)


def test_a_snapshot_omits_values_expired_when_it_was_taken(stores: Stores) -> None:
    clock = ManualClock()
    job = ttl_job(stores, clock)
    job.write("old", 1)
    clock.advance(6.0)
    job.write("new", 2)
    clock.advance(4.0)
    snapshot = job.store.snapshot()
    clock.advance(100.0)
    assert flat(snapshot) == {
        "value": {"new": 2},
        "list": {"new": [2]},
        "map": {"new": {"m2": 2}},
        "reducing": {"new": 2},
        "aggregating": {"new": [2, 1]},
    }


def test_restored_values_live_a_full_ttl_from_the_restore(stores: Stores) -> None:
    clock = ManualClock()
    source = ttl_job(stores, clock)
    source.write("a", 2)
    groups = source.store.snapshot().by_key_group(MAX_PARALLELISM)
    clock.advance(9.0)
    job = ttl_job(stores, clock)
    job.store.restore(groups)
    clock.advance(9.0)
    alive = job.read("a")
    clock.advance(1.0)
    assert (alive, job.read("a")) == ((2, [2], {"m2": 2}, 2, 2.0), (None, [], {}, None, None))


def test_values_restored_before_their_declaration_expire_a_ttl_after_the_restore(
    stores: Stores,
) -> None:
    clock = ManualClock()
    store = stores.new(clock)
    store.restore({0: {"list": {"a": [1]}, "map": {"a": {"x": 1}}}})
    clock.advance(5.0)
    job = EveryState(store, TTL_EVERY)
    alive = job.read("a")[1:3]
    snapshot = flat_groups(job.store.snapshot().by_key_group(MAX_PARALLELISM))
    clock.advance(5.0)
    assert (alive, snapshot, job.read("a")[1:3]) == (
        ([1], {"x": 1}),
        {"list": {"a": [1]}, "map": {"a": {"x": 1}}},
        ([], {}),
    )
