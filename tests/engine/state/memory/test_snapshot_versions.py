"""Snapshots as versions: each holds the state at its barrier while writes go on, and gives it
back (released, then folded) without leaving layers or values behind."""

from __future__ import annotations

import gc
import operator
import weakref
from typing import Any

import pytest

from lockgate.engine.state import (
    AggregatingStateDescriptor,
    KeyedStateSnapshot,
    KeyedStateStore,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from lockgate.engine.state.memory.store import FOLD_BUDGET
from lockgate.engine.testing import ManualClock
from tests.engine.state.states import MAX_PARALLELISM, Average

TTL = StateTtlConfig(10.0)
KINDS = {
    "value": ValueStateDescriptor[int]("value"),
    "list": ListStateDescriptor[int]("list"),
    "map": MapStateDescriptor[str, int]("map"),
    "reducing": ReducingStateDescriptor[int]("reducing", operator.add),
    "aggregating": AggregatingStateDescriptor("aggregating", Average()),
    "value with ttl": ValueStateDescriptor[int]("value", ttl=TTL),
    "list with ttl": ListStateDescriptor[int]("list", ttl=TTL),
    "map with ttl": MapStateDescriptor[str, int]("map", ttl=TTL),
    "reducing with ttl": ReducingStateDescriptor[int]("reducing", operator.add, ttl=TTL),
    "aggregating with ttl": AggregatingStateDescriptor("aggregating", Average(), ttl=TTL),
}
KEYS = ("a", "b", "c", "d")


class Keyed:
    """A store with one state, written and read per key as a job does."""

    def __init__(self, descriptor: Any, store: KeyedStateStore | None = None) -> None:
        self.descriptor = descriptor
        self.store = store or KeyedStateStore(ManualClock())
        self.state = self.store.get_state(descriptor)

    def write(self, key: str, number: int) -> None:
        self.store.current_key = key
        if isinstance(self.descriptor, ValueStateDescriptor):
            self.state.update(number)
        elif isinstance(self.descriptor, MapStateDescriptor):
            self.state.put(f"m{number}", number)
        else:
            self.state.add(number)

    def clear(self, key: str) -> None:
        self.store.current_key = key
        self.state.clear()

    def reads(self) -> dict[str, Any]:
        return {key: self.read(key) for key in KEYS}

    def read(self, key: str) -> Any:
        self.store.current_key = key
        if isinstance(self.descriptor, ValueStateDescriptor):
            return self.state.value()
        if isinstance(self.descriptor, MapStateDescriptor):
            return dict(self.state.items())
        return self.state.get()

    def fold(self, budget: int = 2) -> None:
        while self.store.fold(budget=budget):
            pass


def restored(snapshot: KeyedStateSnapshot, descriptor: Any) -> dict[str, Any]:
    """What a store restored from ``snapshot`` reads for every key."""
    store = KeyedStateStore(ManualClock())
    store.restore(snapshot.by_key_group(MAX_PARALLELISM), snapshot.kinds)
    return Keyed(descriptor, store).reads()


@pytest.mark.parametrize("descriptor", KINDS.values(), ids=KINDS.keys())
def test_a_snapshot_holds_exactly_the_state_at_its_barrier_while_writes_go_on(
    descriptor: Any,
) -> None:
    job = Keyed(descriptor)
    for number, key in enumerate(("a", "b", "c", "a", "c")):
        job.write(key, number)
    at_barrier = job.reads()

    snapshot = job.store.snapshot()
    job.write("a", 7)
    job.clear("b")
    job.write("d", 8)
    job.fold(budget=FOLD_BUDGET)  # while the snapshot is held: its layers stay as they are
    job.write("c", 9)

    assert restored(snapshot, descriptor) == at_barrier
    assert job.reads() != at_barrier


@pytest.mark.parametrize("descriptor", KINDS.values(), ids=KINDS.keys())
def test_a_released_snapshot_folds_back_into_one_layer_holding_the_latest_writes(
    descriptor: Any,
) -> None:
    job = Keyed(descriptor)
    for number, key in enumerate(KEYS):
        job.write(key, number)
    snapshot = job.store.snapshot()
    job.write("a", 7)
    job.clear("b")
    latest = job.reads()

    snapshot.release()
    job.fold()

    stats = job.store.statistics()
    assert (stats.versions_held, stats.frozen_layers) == (0, 0)
    assert job.reads() == latest


def test_two_overlapping_snapshots_each_hold_their_own_barrier() -> None:
    descriptor = KINDS["list"]
    job = Keyed(descriptor)
    job.write("a", 1)
    first = job.store.snapshot()
    at_first = job.reads()
    job.write("a", 2)
    job.write("b", 3)
    second = job.store.snapshot()
    at_second = job.reads()
    job.clear("a")
    assert job.store.statistics().versions_held == 2

    assert restored(first, descriptor) == at_first
    first.release()
    job.fold(budget=FOLD_BUDGET)  # the second still holds its layers
    job.write("c", 4)

    assert restored(second, descriptor) == at_second
    second.release()
    job.fold()
    assert job.store.statistics().frozen_layers == 0
    assert job.reads() == {"a": [], "b": [3], "c": [4], "d": []}


def test_a_snapshot_dropped_without_a_release_holds_nothing() -> None:
    job = Keyed(KINDS["value"])
    job.write("a", 1)

    job.store.snapshot()  # not kept: garbage as soon as it is made
    job.write("a", 2)
    job.fold()

    stats = job.store.statistics()
    assert (stats.versions_held, stats.frozen_layers) == (0, 0)


class Value:
    """A stored value that a test can watch being freed."""


def test_values_replaced_after_a_snapshot_are_freed_once_it_is_released_and_folded() -> None:
    job = Keyed(ValueStateDescriptor[Value]("value"))
    for key in KEYS:
        job.store.current_key = key
        job.state.update(Value())
    replaced = [weakref.ref(job.state.value()) for _ in (0,)]
    snapshot = job.store.snapshot()
    for key in KEYS:
        job.store.current_key = key
        job.state.update(Value())

    snapshot.release()
    del snapshot
    job.fold()
    gc.collect()

    assert [ref() for ref in replaced] == [None]


def test_a_held_snapshot_keeps_the_values_it_holds() -> None:
    job = Keyed(ValueStateDescriptor[Value]("value"))
    job.store.current_key = "a"
    job.state.update(Value())
    replaced = weakref.ref(job.state.value())
    snapshot = job.store.snapshot()
    job.state.update(Value())

    job.fold()
    gc.collect()

    assert replaced() is not None
    assert snapshot.entries == 1


def test_a_detached_snapshot_outlives_the_release_of_its_version() -> None:
    descriptor = KINDS["map"]
    job = Keyed(descriptor)
    job.write("a", 1)
    snapshot = job.store.snapshot()
    at_barrier = job.reads()
    job.write("a", 2)

    detached = snapshot.detached()
    snapshot.release()
    job.fold()
    job.write("a", 3)

    assert detached.version is None
    assert restored(detached, descriptor) == at_barrier


def test_a_copied_snapshot_holds_no_version_and_the_state_at_its_barrier() -> None:
    descriptor = KINDS["aggregating"]
    job = Keyed(descriptor)
    job.write("a", 1)
    at_barrier = job.reads()

    copied = job.store.snapshot(copy=True)
    job.write("a", 2)

    assert (copied.version, job.store.statistics().frozen_layers) == (None, 0)
    assert restored(copied, descriptor) == at_barrier
