"""A versioned table: versions that never change, a live layer, and folds in bounded steps."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from lockgate.engine.state.memory.layers import ABSENT, count, merged_items
from lockgate.engine.state.memory.table_fold import MAX_CHANGE_LAYERS
from lockgate.engine.state.memory.versioned_table import VersionedTable


def read(layers: tuple[dict[Any, Any], ...]) -> dict[Any, Any]:
    return dict(merged_items(layers))


def filled(count: int) -> VersionedTable:
    table = VersionedTable()
    table.live.update((key, key) for key in range(count))
    return table


def fold_all(table: VersionedTable, *, held: bool = False, budget: int = 4) -> None:
    while table.fold(budget, held=held):
        pass


def test_a_version_keeps_its_values_while_the_table_changes() -> None:
    table = filled(3)

    version = table.freeze()
    table[0] = "new"
    table.discard(1)
    table[9] = 9

    assert read(version) == {0: 0, 1: 1, 2: 2}
    assert dict(table.items()) == {0: "new", 2: 2, 9: 9}


def test_a_key_deleted_after_a_freeze_is_a_tombstone_only_while_a_layer_under_it_holds_it() -> None:
    table = filled(1)
    table.freeze()
    table[5] = 5

    table.discard(0)
    table.discard(5)

    assert table.live == {0: ABSENT}
    assert (0 in table, 5 in table, len(table)) == (False, False, 0)


def test_freezing_a_table_not_written_since_its_last_freeze_adds_no_layer() -> None:
    table = filled(2)
    first = table.freeze()

    assert table.freeze() is first
    assert table.frozen_layers == 1


def test_a_fold_without_versions_held_leaves_one_layer_with_every_value() -> None:
    table = filled(10)
    table.freeze()
    table[3] = "three"
    table.discard(4)
    table.freeze()
    table[11] = 11

    fold_all(table)

    assert table.frozen_layers == 0
    expected = {key: key for key in range(10) if key != 4} | {3: "three", 11: 11}
    assert table.live == expected


def test_a_fold_while_versions_are_held_changes_no_layer_they_hold() -> None:
    table = filled(10)
    version = table.freeze()
    table[3] = "three"
    before = [dict(layer) for layer in version]

    assert table.fold(4, held=True) == 0
    assert [dict(layer) for layer in version] == before


def test_more_held_layers_than_the_bound_are_merged_into_a_new_dict() -> None:
    table = filled(5)
    versions = []
    for round_ in range(MAX_CHANGE_LAYERS + 2):
        versions.append(table.freeze())
        table[round_] = f"round {round_}"
    contents = [read(version) for version in versions]

    fold_all(table, held=True)

    assert table.frozen_layers == 2  # the merged layers over the base
    assert [read(version) for version in versions] == contents
    assert dict(table.items()) == {key: f"round {key}" for key in range(5)} | {
        key: f"round {key}" for key in range(5, MAX_CHANGE_LAYERS + 2)
    }


def test_a_fold_ends_even_while_every_step_writes_new_keys() -> None:
    table = filled(100)
    table.freeze()
    written = 100
    steps = 0

    while table.fold(10, held=False):
        table.live.update((key, key) for key in range(written, written + 20))
        written += 20
        steps += 1

    assert table.frozen_layers == 0
    assert table.live == {key: key for key in range(written)}
    assert steps < 100


def test_the_fast_getter_under_the_live_layer_sees_no_key_the_live_layer_deleted() -> None:
    table = filled(2)
    table.freeze()
    table.discard(0)

    below = table.fast_below()

    assert (below(0, ABSENT), below(1, ABSENT)) == (ABSENT, 1)


KEYS = st.integers(0, 5)
OPERATIONS = st.one_of(
    st.tuples(st.just("set"), KEYS, st.integers(0, 9)),
    st.tuples(st.just("delete"), KEYS, st.just(0)),
    st.tuples(st.just("pop"), KEYS, st.just(0)),
    st.tuples(st.just("freeze"), st.just(0), st.just(0)),
    st.tuples(st.just("release"), st.integers(0, 9), st.just(0)),
    st.tuples(st.just("fold"), st.integers(1, 3), st.just(0)),
)


@given(st.lists(OPERATIONS, max_size=80))
def test_the_table_and_every_held_version_read_as_their_models(operations: list[Any]) -> None:
    table = VersionedTable()
    model: dict[int, int] = {}
    held: list[tuple[tuple[dict[Any, Any], ...], dict[int, int]]] = []

    for operation, argument, value in operations:
        if operation == "set":
            table[argument] = model[argument] = value
        elif operation == "delete":
            table.discard(argument)
            model.pop(argument, None)
        elif operation == "pop":
            assert table.pop(argument, None) == model.pop(argument, None)
        elif operation == "freeze":
            held.append((table.freeze(), dict(model)))
        elif operation == "release" and held:
            held.pop(argument % len(held))
        elif operation == "fold":
            table.fold(argument, held=bool(held))
        assert dict(table.items()) == model
        assert [table.get(key, ABSENT) for key in range(6)] == [
            model.get(key, ABSENT) for key in range(6)
        ]
        assert len(table) == count(table.layers()) == len(model)
        assert all(read(version) == expected for version, expected in held)


def test_a_fold_ends_even_while_writes_refill_the_live_layer_as_fast_as_it_is_applied() -> None:
    table = filled(1_000)
    table.freeze()
    table.live.update((key, -key) for key in range(20))  # 20 keys over a budget of 10
    hot = itertools.cycle(range(20))  # each round of 4 steps writes those 20 keys again

    steps = 0
    while table.fold(10, held=False) and steps < 10_000:
        table.live.update((key, -key) for key in itertools.islice(hot, 5))
        steps += 1

    assert table.frozen_layers == 0
    assert table.live == {key: -key if key < 20 else key for key in range(1_000)}
