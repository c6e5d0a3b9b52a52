from __future__ import annotations

import operator
from typing import Any

from lockgate.engine.state import (
    AggregatingStateDescriptor,
    KeyedStateStore,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from lockgate.engine.time.clock import ManualClock
from tests.engine.state.states import MAX_PARALLELISM, Average, EveryState, flat

TTL = StateTtlConfig(10.0)
VALUE = ValueStateDescriptor[int]("value", ttl=TTL)
LIST = ListStateDescriptor[int]("list", ttl=TTL)
MAP = MapStateDescriptor[str, int]("map", ttl=TTL)
REDUCING = ReducingStateDescriptor[int]("reducing", operator.add, ttl=TTL)
AGGREGATING = AggregatingStateDescriptor("aggregating", Average(), ttl=TTL)


class Job(EveryState):
    """A store with one TTL state of every kind, on a manual clock."""

    def __init__(self, clock: ManualClock) -> None:
        super().__init__(KeyedStateStore(clock), (VALUE, LIST, MAP, REDUCING, AGGREGATING))


def test_a_snapshot_holds_live_ttl_values_as_plain_values() -> None:
    job = Job(ManualClock())
    job.write("a", 2)
    assert flat(job.store.snapshot()) == {
        "value": {"a": 2},
        "list": {"a": [2]},
        "map": {"a": {"m2": 2}},
        "reducing": {"a": 2},
        "aggregating": {"a": [2, 1]},
    }


def test_a_snapshot_omits_values_expired_when_it_was_taken() -> None:
    clock = ManualClock()
    job = Job(clock)
    job.write("old", 1)
    clock.advance(6.0)
    job.write("new", 2)
    clock.advance(4.0)
    assert flat(job.store.snapshot()) == {
        "value": {"new": 2},
        "list": {"new": [2]},
        "map": {"new": {"m2": 2}},
        "reducing": {"new": 2},
        "aggregating": {"new": [2, 1]},
    }


def test_a_snapshot_judges_expiry_at_its_own_time_not_at_split_time() -> None:
    clock = ManualClock()
    job = Job(clock)
    job.write("a", 1)
    snapshot = job.store.snapshot()
    clock.advance(100.0)
    assert flat(snapshot)["value"] == {"a": 1}


def test_a_snapshot_omits_expired_map_entries_but_keeps_live_ones() -> None:
    clock = ManualClock()
    job = Job(clock)
    job.store.current_key = "a"
    job.map.put("old", 1)
    clock.advance(6.0)
    job.map.put("new", 2)
    clock.advance(4.0)
    assert flat(job.store.snapshot())["map"] == {"a": {"new": 2}}


def test_a_refresh_after_a_snapshot_leaves_the_snapshot_unchanged() -> None:
    clock = ManualClock()
    job = Job(clock)
    job.write("a", 1)
    snapshot = job.store.snapshot()
    job.write("a", 2)
    assert flat(snapshot)["list"] == {"a": [1]}


def restored(groups: Any, clock: ManualClock) -> Job:
    job = Job(clock)
    job.store.restore(groups)
    return job


def test_restored_values_are_read_back() -> None:
    clock = ManualClock()
    source = Job(clock)
    source.write("a", 2)
    job = restored(source.store.snapshot().by_key_group(MAX_PARALLELISM), clock)
    assert job.read("a") == (2, [2], {"m2": 2}, 2, 2.0)


def test_restored_values_live_a_full_ttl_from_the_restore() -> None:
    clock = ManualClock()
    source = Job(clock)
    source.write("a", 2)
    groups = source.store.snapshot().by_key_group(MAX_PARALLELISM)
    clock.advance(9.0)
    job = restored(groups, clock)
    clock.advance(9.0)
    assert job.read("a") == (2, [2], {"m2": 2}, 2, 2.0)


def test_restored_values_expire_a_ttl_after_the_restore() -> None:
    clock = ManualClock()
    source = Job(clock)
    source.write("a", 2)
    job = restored(source.store.snapshot().by_key_group(MAX_PARALLELISM), clock)
    clock.advance(10.0)
    assert job.read("a") == (None, [], {}, None, None)


def test_values_restored_before_their_declaration_expire_a_ttl_after_the_restore() -> None:
    clock = ManualClock()
    source = Job(clock)
    source.write("a", 2)
    store = KeyedStateStore(clock)
    store.restore(source.store.snapshot().by_key_group(MAX_PARALLELISM))
    clock.advance(5.0)
    state = store.get_state(LIST)
    store.current_key = "a"
    clock.advance(5.0)
    assert state.get() == []


def test_a_restored_container_is_copied_on_its_first_write() -> None:
    clock = ManualClock()
    groups = {0: {"list": {"a": [1]}}}
    job = restored(groups, clock)
    job.store.current_key = "a"
    job.list.add(2)
    assert groups == {0: {"list": {"a": [1]}}}


def test_state_without_ttl_restores_and_snapshots_as_before() -> None:
    clock = ManualClock()
    store = KeyedStateStore(clock)
    store.restore({0: {"plain": {"a": [1]}}})
    state = store.get_state(ListStateDescriptor[int]("plain"))
    store.current_key = "a"
    clock.advance(1e9)
    assert (state.get(), flat(store.snapshot())) == ([1], {"plain": {"a": [1]}})
