"""The five keyed state handles, as abstract types that every state backend implements.

A user function declares state with a descriptor and gets one of these handles back; its
reads and writes apply to the key of the current record. ``memory/`` (the heap, with
copy-on-write snapshots) and ``rocksdb/`` (on disk) implement each one side by side, so an
annotation such as ``ValueState[int]`` fits whichever backend the job runs on.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Generic, TypeVar

__all__ = ["AggregatingState", "ListState", "MapState", "ReducingState", "ValueState"]

V = TypeVar("V")
UK = TypeVar("UK")
UV = TypeVar("UV")
IN = TypeVar("IN")
OUT = TypeVar("OUT")


class ValueState(ABC, Generic[V]):
    """One value per key; reads and writes apply to the key of the current record.

    ``update`` replaces the stored value wholesale: never change a value in place after
    ``update`` (or one read with ``value``); build a new one and ``update`` again. Updating
    to ``None`` clears the key, as in Flink.
    """

    __slots__ = ()

    @abstractmethod
    def value(self) -> V:
        """Return the current key's value, or the descriptor's default."""

    @abstractmethod
    def update(self, value: V) -> None:
        """Set the current key's value; ``None`` clears it."""

    @abstractmethod
    def clear(self) -> None:
        """Remove the current key's value."""


class ListState(ABC, Generic[V]):
    """A list of values per key (or per subtask, as operator state); ``get`` returns a copy.

    Never change an element in place after adding it: a snapshot may share it. A key whose
    list becomes empty holds no state at all.
    """

    __slots__ = ()

    @abstractmethod
    def get(self) -> list[V]:
        """Return a copy of the current key's list (empty if it has none)."""

    @abstractmethod
    def add(self, value: V) -> None:
        """Append ``value`` to the current key's list."""

    @abstractmethod
    def add_all(self, values: Iterable[V]) -> None:
        """Append every one of ``values`` to the current key's list."""

    @abstractmethod
    def update(self, values: Iterable[V]) -> None:
        """Replace the current key's list with ``values``; an empty one clears the key."""

    @abstractmethod
    def clear(self) -> None:
        """Remove the current key's list."""


class MapState(ABC, Generic[UK, UV]):
    """A map from user keys to values per key (or per subtask, as broadcast state).

    Views (``keys``, ``values``, ``items``) are copies; never change a value in place after
    ``put``. A key whose map becomes empty holds no state at all.
    """

    __slots__ = ()

    @abstractmethod
    def get(self, key: UK) -> UV | None:
        """Return the value under ``key`` in the current key's map, or ``None``."""

    @abstractmethod
    def put(self, key: UK, value: UV) -> None:
        """Set ``key`` to ``value`` in the current key's map."""

    @abstractmethod
    def put_all(self, entries: Mapping[UK, UV]) -> None:
        """Set every key of ``entries`` in the current key's map."""

    @abstractmethod
    def remove(self, key: UK) -> None:
        """Remove ``key`` from the current key's map, if it is there."""

    @abstractmethod
    def contains(self, key: UK) -> bool:
        """Whether the current key's map holds ``key``."""

    @abstractmethod
    def keys(self) -> list[UK]:
        """Return the user keys of the current key's map."""

    @abstractmethod
    def values(self) -> list[UV]:
        """Return the values of the current key's map."""

    @abstractmethod
    def items(self) -> list[tuple[UK, UV]]:
        """Return the (user key, value) pairs of the current key's map."""

    @abstractmethod
    def is_empty(self) -> bool:
        """Whether the current key's map holds nothing."""

    @abstractmethod
    def clear(self) -> None:
        """Remove the current key's map."""


class ReducingState(ABC, Generic[V]):
    """Per key, ``reduce(previous, value)`` over every value added since the last ``clear``.

    The reduce function must return a value rather than change ``previous`` in place: a
    snapshot may hold it.
    """

    __slots__ = ()

    @abstractmethod
    def get(self) -> V | None:
        """Return the current key's reduced value, or ``None`` if nothing was added."""

    @abstractmethod
    def add(self, value: V) -> None:
        """Fold ``value`` into the current key's reduced value."""

    @abstractmethod
    def clear(self) -> None:
        """Remove the current key's reduced value."""


class AggregatingState(ABC, Generic[IN, OUT]):
    """Per key, ``get_result`` of an accumulator that every added value was folded into.

    ``AggregateFunction.add`` may change the accumulator in place: no backend lets that
    change reach a snapshot already taken.
    """

    __slots__ = ()

    @abstractmethod
    def get(self) -> OUT | None:
        """Return the result for the current key, or ``None`` if nothing was added."""

    @abstractmethod
    def add(self, value: IN) -> None:
        """Fold ``value`` into the current key's accumulator."""

    @abstractmethod
    def clear(self) -> None:
        """Remove the current key's accumulator."""
