"""Random writes and snapshots: every snapshot holds exactly the state at its instant."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from lockgate.engine.state import (
    AggregatingStateDescriptor,
    KeyedStateSnapshot,
    KeyedStateStore,
    ListStateDescriptor,
    MapStateDescriptor,
)
from tests.engine.state.states import MAX_PARALLELISM, Average, flat, flat_groups

KEYS = st.integers(0, 3)
NUMBERS = st.integers(0, 9)
OPERATIONS = st.one_of(
    st.tuples(st.just("add"), KEYS, NUMBERS),
    st.tuples(st.just("update"), KEYS, st.lists(NUMBERS, max_size=3)),
    st.tuples(st.just("put"), KEYS, NUMBERS),
    st.tuples(st.just("remove"), KEYS, NUMBERS),
    st.tuples(st.just("aggregate"), KEYS, NUMBERS),
    st.tuples(st.just("clear"), KEYS, NUMBERS),
    st.tuples(st.just("snapshot"), KEYS, NUMBERS),
)


class Model:
    """The store under test beside a plain-dict model of what it should hold."""

    def __init__(self) -> None:
        self.store = KeyedStateStore()
        self.list = self.store.get_state(ListStateDescriptor[int]("list"))
        self.map = self.store.get_state(MapStateDescriptor[int, int]("map"))
        self.avg = self.store.get_state(AggregatingStateDescriptor("avg", Average()))
        self.expected: dict[str, dict[Any, Any]] = {"list": {}, "map": {}, "avg": {}}
        self.snapshots: list[tuple[KeyedStateSnapshot, dict[str, Any]]] = []

    def apply(self, operation: str, key: int, argument: Any) -> None:
        self.store.current_key = key
        getattr(self, operation)(key, argument)

    def add(self, key: int, number: int) -> None:
        self.list.add(number)
        self.expected["list"].setdefault(key, []).append(number)

    def update(self, key: int, numbers: list[int]) -> None:
        self.list.update(numbers)
        self._set("list", key, list(numbers))

    def put(self, key: int, number: int) -> None:
        self.map.put(number, number * 10)
        self.expected["map"].setdefault(key, {})[number] = number * 10

    def remove(self, key: int, number: int) -> None:
        self.map.remove(number)
        entries = self.expected["map"].get(key, {})
        entries.pop(number, None)
        self._set("map", key, entries)

    def aggregate(self, key: int, number: int) -> None:
        self.avg.add(number)
        total, count = self.expected["avg"].get(key, [0, 0])
        self.expected["avg"][key] = [total + number, count + 1]

    def clear(self, key: int, _: int) -> None:
        for state in (self.list, self.map, self.avg):
            state.clear()
        for table in self.expected.values():
            table.pop(key, None)

    def snapshot(self, _: int, __: int) -> None:
        plain = {name: table for name, table in self.expected.items() if table}
        self.snapshots.append((self.store.snapshot(), copy.deepcopy(plain)))

    def _set(self, name: str, key: int, value: Any) -> None:
        if value:
            self.expected[name][key] = value
        else:
            self.expected[name].pop(key, None)


@given(st.lists(OPERATIONS, max_size=60))
def test_every_snapshot_holds_exactly_the_state_at_its_instant(operations: list[Any]) -> None:
    model = Model()

    for operation in operations:
        model.apply(*operation)
    model.snapshot(0, 0)

    assert [flat(snapshot) for snapshot, _ in model.snapshots] == [
        expected for _, expected in model.snapshots
    ]


@given(st.lists(OPERATIONS, max_size=40), st.lists(OPERATIONS, max_size=40))
def test_a_restored_store_holds_its_snapshot_and_writes_never_reach_the_restored_data(
    before: list[Any], after: list[Any]
) -> None:
    model = Model()
    for operation in before:
        model.apply(*operation)
    model.snapshot(0, 0)
    snapshot, expected = model.snapshots[0]
    groups = snapshot.by_key_group(MAX_PARALLELISM)
    restored = Model()
    restored.store.restore(groups)

    for operation in after:
        restored.apply(*operation)

    assert flat(snapshot) == expected
    assert flat_groups(groups) == expected
