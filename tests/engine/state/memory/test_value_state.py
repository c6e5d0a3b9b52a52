from __future__ import annotations

from lockgate.engine.state import KeyedStateStore, ValueStateDescriptor


def make() -> tuple[KeyedStateStore, ValueStateDescriptor[int]]:
    return KeyedStateStore(), ValueStateDescriptor[int]("count", default=0)


def test_value_state_returns_the_default_until_updated() -> None:
    store, descriptor = make()
    state = store.get_state(descriptor)
    store.current_key = "a"

    assert state.value() == 0


def test_value_state_keeps_one_value_per_key() -> None:
    store, descriptor = make()
    state = store.get_state(descriptor)

    store.current_key = "a"
    state.update(1)
    store.current_key = "b"
    state.update(2)

    store.current_key = "a"
    assert state.value() == 1


def test_value_state_clear_returns_the_key_to_the_default() -> None:
    store, descriptor = make()
    state = store.get_state(descriptor)
    store.current_key = "a"
    state.update(5)

    state.clear()

    assert state.value() == 0
    assert store.key_count() == 0


def test_updating_a_value_state_to_none_clears_it() -> None:
    store = KeyedStateStore()
    state = store.get_state(ValueStateDescriptor[str]("last"))
    store.current_key = "a"
    state.update("x")

    state.update(None)  # type: ignore[arg-type]

    assert store.key_count() == 0


def test_value_state_and_the_raw_table_see_the_same_values() -> None:
    store, descriptor = make()
    state = store.value_state(descriptor)
    store.current_key = "a"
    state.update(7)

    assert store.table(descriptor) == {"a": 7}
