"""State descriptors: how a function declares the state it keeps.

A descriptor names one piece of state and says its kind (value, list, map, reducing,
aggregating). Two declarations of one name must agree on the kind and, for a value state,
on the default and the TTL; the functions of reducing and aggregating descriptors are not compared,
because each state handle folds with the function of the descriptor it was made from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from lockgate.engine.state.aggregate_function import AggregateFunction
from lockgate.engine.state.ttl import StateTtlConfig

__all__ = [
    "AggregatingStateDescriptor",
    "ListStateDescriptor",
    "MapStateDescriptor",
    "ReducingStateDescriptor",
    "StateDescriptor",
    "ValueStateDescriptor",
    "check_keyed",
    "kind_of",
]

V = TypeVar("V")
UK = TypeVar("UK")
UV = TypeVar("UV")
IN = TypeVar("IN")
ACC = TypeVar("ACC")
OUT = TypeVar("OUT")


@dataclass(frozen=True)
class StateDescriptor:
    """Names one piece of state of an operator; the name is unique within the operator.

    ``ttl`` (keyword only) makes keyed state expire; operator state takes no TTL.
    """

    name: str
    ttl: StateTtlConfig | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a state descriptor needs a non-empty name")


@dataclass(frozen=True)
class ValueStateDescriptor(StateDescriptor, Generic[V]):
    """Declares a ``ValueState``: one value per key, ``default`` until first updated.

    The default is shared by every key that has no value: never change it in place.
    """

    default: Any = None


@dataclass(frozen=True)
class ListStateDescriptor(StateDescriptor, Generic[V]):
    """Declares a ``ListState``: a list of values per key (or per subtask, as operator state).

    As operator state, the lists of all subtasks are redistributed on restore: split evenly,
    or (``get_union_list_state``) given whole to every subtask.
    """


@dataclass(frozen=True)
class MapStateDescriptor(StateDescriptor, Generic[UK, UV]):
    """Declares a ``MapState``: a map from user keys to values per key (or broadcast state).

    With a TTL, each map entry expires on its own.
    """


@dataclass(frozen=True)
class ReducingStateDescriptor(StateDescriptor, Generic[V]):
    """Declares a ``ReducingState``: per key, one value that ``reduce_function`` folds into.

    The function must return a new value rather than change its arguments in place.
    """

    reduce_function: Callable[[V, V], V] = field(compare=False)


@dataclass(frozen=True)
class AggregatingStateDescriptor(StateDescriptor, Generic[IN, ACC, OUT]):
    """Declares an ``AggregatingState``: per key, an accumulator of ``aggregate_function``.

    Accumulators are copied before their first change after a snapshot, so ``add`` may
    change them in place.
    """

    aggregate_function: AggregateFunction[IN, ACC, OUT] = field(compare=False)


_KINDS: tuple[tuple[type[StateDescriptor], str], ...] = (
    (ValueStateDescriptor, "value"),
    (ListStateDescriptor, "list"),
    (MapStateDescriptor, "map"),
    (ReducingStateDescriptor, "reducing"),
    (AggregatingStateDescriptor, "aggregating"),
)


def kind_of(descriptor: StateDescriptor) -> str:
    """Return the kind a descriptor declares: value, list, map, reducing or aggregating.

    Snapshots record it per state, so a restore can tell when a job declares a state it
    restores as another kind.
    """
    for cls, kind in _KINDS:
        if isinstance(descriptor, cls):
            return kind
    raise TypeError(f"state '{descriptor.name}' has no keyed state kind: {descriptor!r}")


def check_keyed(descriptor: StateDescriptor) -> None:
    """Raise ``TypeError`` unless ``descriptor`` is one of the five keyed state descriptors."""
    if not isinstance(descriptor, tuple(cls for cls, _ in _KINDS)):
        raise TypeError(
            f"state '{descriptor.name}' needs a keyed state descriptor; got {descriptor}"
        )
