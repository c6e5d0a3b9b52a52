"""read_state reads one key's value of a state by name, as its handle returns it, on both
backends: what job.query_state() answers with."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockgate.engine.errors import QueryStateError
from lockgate.engine.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from lockgate.engine.state.state_reader import read_state
from tests.engine.state.backends import BACKENDS, Stores
from tests.engine.state.states import Average, EveryState

EVERY = (
    ValueStateDescriptor[int]("value", default=-1),
    ListStateDescriptor[int]("list"),
    MapStateDescriptor[str, int]("map"),
    ReducingStateDescriptor[int]("reducing", operator.add),
    AggregatingStateDescriptor("aggregating", Average()),
)
OWNER = "operator 'every' (subtask 1/1)"


@pytest.fixture(params=BACKENDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    made = Stores(request.param, tmp_path)
    yield made
    made.close_all()


def written(stores: Stores) -> Any:
    store = stores.new()
    states = EveryState(store, EVERY)
    for number in (1, 2, 6):
        states.write("a", number)
    states.write("b", 10)
    return store


@pytest.mark.parametrize(
    ("state_name", "expected"),
    [
        ("value", 6),
        ("list", [1, 2, 6]),
        ("map", {"m1": 1, "m2": 2, "m6": 6}),
        ("reducing", 9),
        ("aggregating", 3.0),
    ],
)
def test_read_state_returns_what_the_handle_of_each_kind_returns_for_the_key(
    stores: Stores, state_name: str, expected: Any
) -> None:
    store = written(stores)

    assert read_state(store, state_name, "a", owner=OWNER) == expected


@pytest.mark.parametrize(
    ("state_name", "expected"),
    [("value", -1), ("list", []), ("map", {}), ("reducing", None), ("aggregating", None)],
)
def test_read_state_of_a_key_without_state_returns_what_the_handle_returns_then(
    stores: Stores, state_name: str, expected: Any
) -> None:
    store = written(stores)

    assert read_state(store, state_name, "nobody", owner=OWNER) == expected


def test_read_state_leaves_the_current_key_as_it_was(stores: Stores) -> None:
    store = written(stores)
    store.current_key = "b"

    read_state(store, "value", "a", owner=OWNER)

    assert store.current_key == "b"


def test_a_value_read_is_the_callers_own_and_changing_it_leaves_the_state_as_it_was(
    stores: Stores,
) -> None:
    store = stores.new()
    store.current_key = "a"
    store.get_state(ValueStateDescriptor[dict[str, str]]("profile")).update({"tier": "gold"})

    read_state(store, "profile", "a", owner=OWNER)["tier"] = "none"

    assert read_state(store, "profile", "a", owner=OWNER) == {"tier": "gold"}


def test_a_state_name_not_declared_is_refused_naming_the_owner_and_the_declared_states(
    stores: Stores,
) -> None:
    store = written(stores)

    with pytest.raises(QueryStateError) as refused:
        read_state(store, "count", "a", owner=OWNER)

    assert str(refused.value) == (
        "operator 'every' (subtask 1/1) has no keyed state 'count'; its keyed states are "
        "'aggregating', 'list', 'map', 'reducing', 'value'"
    )


def test_a_backend_without_declared_state_says_it_has_none(stores: Stores) -> None:
    with pytest.raises(QueryStateError, match="has declared no keyed state"):
        read_state(stores.new(), "count", "a", owner=OWNER)
