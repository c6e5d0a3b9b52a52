from __future__ import annotations

from lockgate.engine.state import KeyedStateStore, ListState, ListStateDescriptor


def make() -> tuple[KeyedStateStore, ListState[int]]:
    store = KeyedStateStore()
    store.current_key = "a"
    return store, store.get_state(ListStateDescriptor[int]("items"))


def test_list_state_is_empty_for_a_new_key() -> None:
    _, state = make()

    assert state.get() == []


def test_list_state_add_and_add_all_append_in_order() -> None:
    _, state = make()

    state.add(1)
    state.add_all([2, 3])

    assert state.get() == [1, 2, 3]


def test_list_state_update_replaces_the_list() -> None:
    _, state = make()
    state.add_all([1, 2])

    state.update([9])

    assert state.get() == [9]


def test_list_state_update_with_nothing_clears_the_key() -> None:
    store, state = make()
    state.add(1)

    state.update([])

    assert store.key_count() == 0


def test_list_state_add_all_of_nothing_stores_nothing() -> None:
    store, state = make()

    state.add_all([])

    assert store.key_count() == 0


def test_list_state_clear_removes_the_key() -> None:
    store, state = make()
    state.add(1)

    state.clear()

    assert state.get() == []
    assert store.key_count() == 0


def test_list_state_get_returns_a_copy() -> None:
    _, state = make()
    state.add(1)

    state.get().append(2)

    assert state.get() == [1]


def test_list_state_keeps_a_list_per_key() -> None:
    store, state = make()
    state.add(1)
    store.current_key = "b"
    state.add(2)

    store.current_key = "a"
    assert state.get() == [1]
