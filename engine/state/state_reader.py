"""read_state: one key's value of one keyed state, read by name, as its handle returns it ☐.

The read behind ``job.query_state()``: the subtask that owns the key calls it on its own
loop, between batches, so the value is the one its records have made so far.
"""

from __future__ import annotations

import copy
from typing import Any

from lockgate.engine.errors import QueryStateError
from lockgate.engine.state.backend import KeyedStateBackend
from lockgate.engine.state.descriptors import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)

__all__ = ["read_state"]


def read_state(backend: KeyedStateBackend, state_name: str, key: Any, *, owner: str) -> Any:
    """Return ``key``'s value of the state ``state_name`` declared on ``backend``.

    What the state's handle returns for the key: a value state's ``value()`` (its default
    when the key has none), a list state's ``get()`` (``[]``), a map state's items as a dict
    (``{}``), a reducing or aggregating state's ``get()`` (``None``). The value is the
    caller's own (a deep copy), so changing it cannot change the state. The backend's
    current key is the same after as before.

    Raises:
        QueryStateError: ``state_name`` is not declared on ``backend``; the message names
            ``owner`` (such as ``"operator 'sums'"``) and lists the states it declared.
    """
    descriptor = backend.declared_states().get(state_name)
    if descriptor is None:
        raise QueryStateError(_unknown(backend, state_name, owner))
    previous = backend.current_key
    backend.current_key = key
    try:
        return copy.deepcopy(_read(backend, descriptor))
    finally:
        backend.current_key = previous


def _read(backend: KeyedStateBackend, descriptor: StateDescriptor) -> Any:
    match descriptor:
        case ValueStateDescriptor():
            return backend.get_state(descriptor).value()
        case MapStateDescriptor():
            return dict(backend.get_state(descriptor).items())
        case ListStateDescriptor():
            return backend.get_state(descriptor).get()
        case ReducingStateDescriptor():
            return backend.get_state(descriptor).get()
        case _:
            assert isinstance(descriptor, AggregatingStateDescriptor), "a keyed state's kind"
            return backend.get_state(descriptor).get()


def _unknown(backend: KeyedStateBackend, state_name: str, owner: str) -> str:
    names = sorted(backend.declared_states())
    if not names:
        return (
            f"{owner} has declared no keyed state (yet), so it has no state '{state_name}'; "
            "query an operator whose function declares its state in open()"
        )
    known = ", ".join(f"'{name}'" for name in names)
    return f"{owner} has no keyed state '{state_name}'; its keyed states are {known}"
