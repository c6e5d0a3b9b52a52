from __future__ import annotations

import pytest

from lockgate.engine.state import (
    ListStateDescriptor,
    MapStateDescriptor,
    OperatorStateSnapshot,
    OperatorStateStore,
    StateTtlConfig,
)

OFFSETS = ListStateDescriptor[int]("offsets")
SEEN = ListStateDescriptor[str]("seen")
RULES = MapStateDescriptor[str, int]("rules")


def test_operator_list_state_keeps_one_list_for_the_subtask() -> None:
    store = OperatorStateStore()
    state = store.get_list_state(OFFSETS)

    state.add_all([1, 2])

    assert store.get_list_state(OFFSETS).get() == [1, 2]


def test_a_snapshot_copies_list_union_and_broadcast_state() -> None:
    store = OperatorStateStore()
    store.get_list_state(OFFSETS).add(1)
    store.get_union_list_state(SEEN).add("x")
    store.get_broadcast_state(RULES).put("r", 1)

    assert store.snapshot() == OperatorStateSnapshot(
        lists={"offsets": [1]}, unions={"seen": ["x"]}, broadcast={"rules": {"r": 1}}
    )


def test_writes_after_a_snapshot_never_reach_it() -> None:
    store = OperatorStateStore()
    offsets, rules = store.get_list_state(OFFSETS), store.get_broadcast_state(RULES)
    offsets.add(1)
    rules.put("r", 1)
    snapshot = store.snapshot()

    offsets.add(2)
    rules.put("r", 2)

    assert (snapshot.lists, snapshot.broadcast) == ({"offsets": [1]}, {"rules": {"r": 1}})


def test_declared_but_empty_states_are_snapshotted_empty() -> None:
    store = OperatorStateStore()
    store.get_list_state(OFFSETS)
    store.get_broadcast_state(RULES)

    assert store.snapshot() == OperatorStateSnapshot({"offsets": []}, {}, {"rules": {}})


def test_restore_gives_each_state_what_it_was_given() -> None:
    store = OperatorStateStore()

    store.restore({"offsets": [3, 4]}, {"seen": ["x", "y"]}, {"rules": {"r": 1}})

    assert store.get_list_state(OFFSETS).get() == [3, 4]
    assert store.get_union_list_state(SEEN).get() == ["x", "y"]
    assert store.get_broadcast_state(RULES).items() == [("r", 1)]


def test_writes_after_a_restore_never_change_what_was_given() -> None:
    given = {"offsets": [3]}
    rules = {"rules": {"r": 1}}
    store = OperatorStateStore()
    store.restore(given, {}, rules)

    store.get_list_state(OFFSETS).add(4)
    store.get_broadcast_state(RULES).put("r", 2)

    assert (given, rules) == ({"offsets": [3]}, {"rules": {"r": 1}})


def test_restored_but_undeclared_state_is_snapshotted_again() -> None:
    store = OperatorStateStore()

    store.restore({"offsets": [3]}, {"seen": ["x"]}, {"rules": {"r": 1}})

    assert store.snapshot() == OperatorStateSnapshot(
        {"offsets": [3]}, {"seen": ["x"]}, {"rules": {"r": 1}}
    )


def test_a_snapshot_restores_into_a_new_store_exactly() -> None:
    store = OperatorStateStore()
    store.get_list_state(OFFSETS).add_all([1, 2])
    store.get_union_list_state(SEEN).add("x")
    store.get_broadcast_state(RULES).put("r", 1)
    snapshot = store.snapshot()

    fresh = OperatorStateStore()
    fresh.restore(snapshot.lists, snapshot.unions, snapshot.broadcast)

    assert fresh.snapshot() == snapshot


def test_a_name_cannot_be_both_list_and_union_list_state() -> None:
    store = OperatorStateStore()
    store.get_list_state(OFFSETS)

    with pytest.raises(ValueError, match="'offsets' is list state; it cannot also be union"):
        store.get_union_list_state(OFFSETS)


def test_a_restored_union_state_cannot_be_declared_as_list_state() -> None:
    store = OperatorStateStore()
    store.restore({}, {"seen": ["x"]}, {})

    with pytest.raises(ValueError, match="'seen' is union list state"):
        store.get_list_state(SEEN)


def test_a_list_state_name_cannot_be_declared_again_as_broadcast_state() -> None:
    store = OperatorStateStore()
    store.get_list_state(OFFSETS)

    with pytest.raises(ValueError, match="'offsets' is list state; it cannot also be broadcast"):
        store.get_broadcast_state(MapStateDescriptor("offsets"))


def test_repr_shows_each_state_and_its_mode() -> None:
    store = OperatorStateStore()
    store.get_union_list_state(SEEN)

    assert repr(store) == "<OperatorStateStore seen=union list>"


@pytest.mark.parametrize("declare", ["list", "union", "broadcast"])
def test_operator_state_refuses_a_ttl_naming_the_state(declare: str) -> None:
    store = OperatorStateStore()
    ttl = StateTtlConfig(5.0)

    with pytest.raises(ValueError, match="operator state 'expiring' has a TTL"):
        if declare == "broadcast":
            store.get_broadcast_state(MapStateDescriptor[str, int]("expiring", ttl=ttl))
        elif declare == "union":
            store.get_union_list_state(ListStateDescriptor[int]("expiring", ttl=ttl))
        else:
            store.get_list_state(ListStateDescriptor[int]("expiring", ttl=ttl))
