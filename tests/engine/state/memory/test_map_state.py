from __future__ import annotations

from lockgate.engine.state import KeyedStateStore, MapState, MapStateDescriptor


def make() -> tuple[KeyedStateStore, MapState[str, int]]:
    store = KeyedStateStore()
    store.current_key = "a"
    return store, store.get_state(MapStateDescriptor[str, int]("counts"))


def test_map_state_is_empty_for_a_new_key() -> None:
    _, state = make()

    assert state.is_empty()
    assert state.get("x") is None
    assert (state.keys(), state.values(), state.items()) == ([], [], [])


def test_map_state_put_and_get_a_value_by_user_key() -> None:
    _, state = make()

    state.put("x", 1)

    assert state.get("x") == 1
    assert state.contains("x")
    assert not state.contains("y")


def test_map_state_put_all_adds_every_entry() -> None:
    _, state = make()
    state.put("x", 1)

    state.put_all({"x": 2, "y": 3})

    assert dict(state.items()) == {"x": 2, "y": 3}
    assert sorted(state.keys()) == ["x", "y"]
    assert sorted(state.values()) == [2, 3]


def test_map_state_remove_drops_one_user_key() -> None:
    _, state = make()
    state.put_all({"x": 1, "y": 2})

    state.remove("x")

    assert state.items() == [("y", 2)]


def test_map_state_removing_the_last_user_key_removes_the_key() -> None:
    store, state = make()
    state.put("x", 1)

    state.remove("x")

    assert state.is_empty()
    assert store.key_count() == 0


def test_map_state_removing_an_absent_user_key_changes_nothing() -> None:
    store, state = make()

    state.remove("x")

    assert store.key_count() == 0


def test_map_state_clear_removes_the_key() -> None:
    store, state = make()
    state.put("x", 1)

    state.clear()

    assert state.is_empty()
    assert store.key_count() == 0


def test_map_state_views_are_copies_that_may_be_iterated_while_removing() -> None:
    _, state = make()
    state.put_all({"x": 1, "y": 2})

    for key in state.keys():  # noqa: SIM118 - a MapState, not a dict: keys() is a copy
        state.remove(key)

    assert state.is_empty()


def test_map_state_keeps_a_map_per_key() -> None:
    store, state = make()
    state.put("x", 1)
    store.current_key = "b"
    state.put("x", 2)

    store.current_key = "a"
    assert state.get("x") == 1
