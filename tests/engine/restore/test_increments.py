"""Deltas of heap keyed state, and rebuilding whole state from a chain of them."""

from __future__ import annotations

from typing import Any

import pytest

from lockgate.engine import ListStateDescriptor, ManualClock, ValueStateDescriptor
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.restore.increments import apply_increments
from lockgate.engine.state import KeyedStateStore, StateTtlConfig

MAX_PARALLELISM = 8


def delta_of(store: KeyedStateStore, base: Any) -> OperatorSnapshot:
    upserts, deleted = store.snapshot().delta_by_key_group(base, MAX_PARALLELISM)
    return OperatorSnapshot("op", keyed=upserts, deleted=deleted, is_delta=True)


def full_of(snapshot: Any) -> OperatorSnapshot:
    return OperatorSnapshot("op", keyed=snapshot.by_key_group(MAX_PARALLELISM))


def flat(snapshot: OperatorSnapshot) -> dict[tuple[str, Any], Any]:
    return {
        (name, key): value
        for states in snapshot.keyed.values()
        for name, table in states.items()
        for key, value in table.items()
    }


def test_a_delta_holds_changed_and_deleted_keys_and_rebuilds_the_state_exactly() -> None:
    store = KeyedStateStore()
    values = store.get_state(ValueStateDescriptor[int]("v"))
    lists = store.get_state(ListStateDescriptor[int]("l"))
    for key in range(100):
        store.current_key = key
        values.update(key)
        lists.add(key)
    base = store.snapshot()
    for key in (1, 2, 3):
        store.current_key = key
        values.update(-key)
    store.current_key = 4
    values.clear()
    store.current_key = 5
    lists.add(500)

    delta = delta_of(store, base)

    assert flat(delta) == {("v", 1): -1, ("v", 2): -2, ("v", 3): -3, ("l", 5): [5, 500]}
    assert {k for groups in delta.deleted.values() for k in groups.get("v", [])} == {4}
    rebuilt = apply_increments([full_of(base), delta])
    assert flat(rebuilt) == flat(full_of(store.snapshot()))


def test_values_whose_ttl_expired_since_the_base_are_deleted_by_the_delta() -> None:
    clock = ManualClock()
    store = KeyedStateStore(clock)
    state = store.get_state(ValueStateDescriptor[int]("v", ttl=StateTtlConfig(10.0)))
    for key in range(3):
        store.current_key = key
        state.update(key)
    base = store.snapshot()
    clock.advance(5.0)
    store.current_key = 0
    state.update(100)  # refreshed: lives on
    clock.advance(6.0)  # keys 1 and 2 expired

    delta = delta_of(store, base)

    assert flat(delta) == {("v", 0): 100}
    assert sorted(k for groups in delta.deleted.values() for k in groups["v"]) == [1, 2]


def test_a_chain_must_start_with_a_full_snapshot() -> None:
    with pytest.raises(ValueError, match="must build on a full one"):
        apply_increments([OperatorSnapshot("op", is_delta=True)])


def test_later_deltas_win_and_a_deleted_key_can_come_back() -> None:
    full = OperatorSnapshot("op", keyed={0: {"v": {"a": 1, "b": 2}}})
    first = OperatorSnapshot(
        "op", keyed={0: {"v": {"a": 10}}}, deleted={0: {"v": ["b"]}}, is_delta=True
    )
    second = OperatorSnapshot("op", keyed={0: {"v": {"b": 20}}}, lists={"x": [1]}, is_delta=True)

    rebuilt = apply_increments([full, first, second])

    assert rebuilt.keyed == {0: {"v": {"a": 10, "b": 20}}}
    assert rebuilt.lists == {"x": [1]}
    assert not rebuilt.is_delta


def test_the_rebuilt_state_keeps_the_channel_state_of_the_last_snapshot() -> None:
    full = OperatorSnapshot("sums", keyed={1: {"count": {"a": 1}}})
    delta = OperatorSnapshot(
        "sums",
        keyed={1: {"count": {"a": 2}}},
        is_delta=True,
        input_channels={ChannelId(0, 0, 0): ["r"]},
    )

    rebuilt = apply_increments([full, delta])

    assert rebuilt.input_channels == {(0, 0, 0): ["r"]}
    assert rebuilt.keyed == {1: {"count": {"a": 2}}}
