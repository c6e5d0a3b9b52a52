from __future__ import annotations

import operator

import pytest

from lockgate.engine.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    KeyedStateStore,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueState,
    ValueStateDescriptor,
)
from tests.engine.state.states import Average


@pytest.mark.parametrize(
    ("descriptor", "kind"),
    [
        (ValueStateDescriptor("s"), ValueState),
        (ListStateDescriptor("s"), ListState),
        (MapStateDescriptor("s"), MapState),
        (ReducingStateDescriptor("s", operator.add), ReducingState),
        (AggregatingStateDescriptor("s", Average()), AggregatingState),
    ],
)
def test_get_state_returns_the_state_type_its_descriptor_declares(
    descriptor: StateDescriptor, kind: type
) -> None:
    assert isinstance(KeyedStateStore().get_state(descriptor), kind)  # type: ignore[call-overload]


def test_declaring_a_name_twice_with_another_kind_of_state_fails_naming_it() -> None:
    store = KeyedStateStore()
    store.get_state(ListStateDescriptor[int]("seen"))

    with pytest.raises(ValueError, match="state 'seen' was declared twice, differently"):
        store.get_state(MapStateDescriptor[int, int]("seen"))


def test_declaring_a_value_state_twice_with_another_default_fails() -> None:
    store = KeyedStateStore()
    store.get_state(ValueStateDescriptor("count", default=0))

    with pytest.raises(ValueError, match="'count'"):
        store.get_state(ValueStateDescriptor("count", default=1))


def test_declaring_the_same_state_twice_gives_handles_on_the_same_values() -> None:
    store = KeyedStateStore()
    first = store.get_state(ListStateDescriptor[int]("items"))
    second = store.get_state(ListStateDescriptor[int]("items"))
    store.current_key = "a"

    first.add(1)

    assert second.get() == [1]


def test_states_of_different_names_are_independent() -> None:
    store = KeyedStateStore()
    a = store.get_state(ValueStateDescriptor[int]("a"))
    b = store.get_state(ValueStateDescriptor[int]("b"))
    store.current_key = "k"

    a.update(1)

    assert b.value() is None


def test_a_descriptor_needs_a_name() -> None:
    with pytest.raises(ValueError, match="non-empty name"):
        ListStateDescriptor("")


def test_get_state_rejects_a_descriptor_that_is_not_keyed_state() -> None:
    with pytest.raises(TypeError, match="'plain'"):
        KeyedStateStore().get_state(StateDescriptor("plain"))  # type: ignore[call-overload]


def test_key_count_counts_keys_holding_any_state() -> None:
    store = KeyedStateStore()
    values = store.get_state(ValueStateDescriptor[int]("v"))
    items = store.get_state(ListStateDescriptor[int]("l"))
    for key in ("a", "b"):
        store.current_key = key
        values.update(1)
    store.current_key = "c"
    items.add(1)

    assert store.key_count() == 3


def test_statistics_count_states_entries_and_snapshots() -> None:
    store = KeyedStateStore()
    state = store.get_state(ValueStateDescriptor[int]("v"))
    store.current_key = "a"
    state.update(1)

    store.snapshot()

    stats = store.statistics()
    assert (stats.states, stats.entries, stats.snapshots, stats.copies_on_write) == (1, 1, 1, 0)


def test_repr_shows_states_entries_and_epoch() -> None:
    store = KeyedStateStore()
    store.get_state(ValueStateDescriptor[int]("v"))

    assert repr(store) == "<KeyedStateStore states=['v'] entries=0 epoch=0 current_key=None>"
