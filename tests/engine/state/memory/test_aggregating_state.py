from __future__ import annotations

from lockgate.engine.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    KeyedStateStore,
)
from tests.engine.state.states import Average, flat


def make() -> tuple[KeyedStateStore, AggregatingState[int, float]]:
    store = KeyedStateStore()
    store.current_key = "a"
    return store, store.get_state(AggregatingStateDescriptor("avg", Average()))


def test_aggregating_state_is_none_until_a_value_is_added() -> None:
    _, state = make()

    assert state.get() is None


def test_aggregating_state_returns_the_result_of_its_accumulator() -> None:
    _, state = make()

    for value in (1, 2, 6):
        state.add(value)

    assert state.get() == 3.0


def test_aggregating_state_clear_starts_a_new_accumulator() -> None:
    _, state = make()
    state.add(10)

    state.clear()
    state.add(2)

    assert state.get() == 2.0


def test_aggregating_state_keeps_an_accumulator_per_key() -> None:
    store, state = make()
    state.add(1)
    store.current_key = "b"
    state.add(9)

    store.current_key = "a"
    assert state.get() == 1.0


def test_an_accumulator_changed_in_place_after_a_snapshot_does_not_change_the_snapshot() -> None:
    store, state = make()
    state.add(1)
    snapshot = store.snapshot()

    state.add(3)

    assert flat(snapshot) == {"avg": {"a": [1, 1]}}
    assert state.get() == 2.0


def test_an_accumulator_is_copied_once_per_snapshot_not_per_add() -> None:
    store, state = make()
    state.add(1)
    store.snapshot()

    for value in range(5):
        state.add(value)

    assert store.statistics().copies_on_write == 1
