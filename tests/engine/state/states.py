"""Helpers shared by the state specifications: a store with declared states, flat snapshots."""

from __future__ import annotations

import operator
from typing import Any

from lockgate.engine.state import (
    AggregateFunction,
    AggregatingStateDescriptor,
    KeyedStateSnapshot,
    KeyedStateStore,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)

MAX_PARALLELISM = 128


def flat(snapshot: KeyedStateSnapshot, max_parallelism: int = MAX_PARALLELISM) -> dict[str, Any]:
    """Merge a snapshot's key groups back into state name -> key -> value."""
    return flat_groups(snapshot.by_key_group(max_parallelism))


def flat_groups(groups: dict[int, dict[str, dict[Any, Any]]]) -> dict[str, Any]:
    """Merge key group -> state name -> key -> value into state name -> key -> value."""
    merged: dict[str, dict[Any, Any]] = {}
    for states in groups.values():
        for name, table in states.items():
            merged.setdefault(name, {}).update(table)
    return merged


class Average(AggregateFunction[int, list[int], float]):
    """Keeps [sum, count] and changes it in place, as Flink allows."""

    def create_accumulator(self) -> list[int]:
        return [0, 0]

    def add(self, value: int, accumulator: list[int]) -> list[int]:
        accumulator[0] += value
        accumulator[1] += 1
        return accumulator

    def get_result(self, accumulator: list[int]) -> float:
        return accumulator[0] / accumulator[1]

    def merge(self, a: list[int], b: list[int]) -> list[int]:
        return [a[0] + b[0], a[1] + b[1]]


class EveryState:
    """A store with one state of every kind (value, list, map, reducing, aggregating),
    written and read as a job would."""

    def __init__(self, store: KeyedStateStore, descriptors: tuple[Any, ...]) -> None:
        self.store = store
        self.value, self.list, self.map, self.reducing, self.aggregating = (
            store.get_state(descriptor) for descriptor in descriptors
        )

    def write(self, key: Any, number: int) -> None:
        self.store.current_key = key
        self.value.update(number)
        self.list.add(number)
        self.map.put(f"m{number}", number)
        self.reducing.add(number)
        self.aggregating.add(number)

    def read(self, key: Any) -> tuple[Any, ...]:
        self.store.current_key = key
        return (
            self.value.value(),
            self.list.get(),
            dict(self.map.items()),
            self.reducing.get(),
            self.aggregating.get(),
        )


TTL = StateTtlConfig(10.0)
DESCRIPTORS = (
    ValueStateDescriptor[int]("value", ttl=TTL),
    ListStateDescriptor[int]("list"),
    MapStateDescriptor[str, int]("map", ttl=TTL),
    ReducingStateDescriptor[int]("reducing", operator.add),
    AggregatingStateDescriptor("aggregating", Average()),
)
"""One state of every kind, two of them with a TTL: what the RocksDB file tests write."""
