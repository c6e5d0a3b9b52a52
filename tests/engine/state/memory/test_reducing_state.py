from __future__ import annotations

import operator

from lockgate.engine.state import KeyedStateStore, ReducingState, ReducingStateDescriptor


def make() -> tuple[KeyedStateStore, ReducingState[int]]:
    store = KeyedStateStore()
    store.current_key = "a"
    return store, store.get_state(ReducingStateDescriptor("sum", operator.add))


def test_reducing_state_is_none_until_a_value_is_added() -> None:
    _, state = make()

    assert state.get() is None


def test_reducing_state_folds_every_added_value() -> None:
    _, state = make()

    for value in (1, 2, 3):
        state.add(value)

    assert state.get() == 6


def test_reducing_state_keeps_the_first_value_as_it_is() -> None:
    store = KeyedStateStore()
    store.current_key = "a"
    state = store.get_state(ReducingStateDescriptor[int]("max", max))

    state.add(4)

    assert state.get() == 4


def test_reducing_state_clear_starts_over() -> None:
    _, state = make()
    state.add(5)

    state.clear()
    state.add(1)

    assert state.get() == 1


def test_reducing_state_keeps_a_value_per_key() -> None:
    store, state = make()
    state.add(1)
    store.current_key = "b"
    state.add(10)

    store.current_key = "a"
    assert state.get() == 1
