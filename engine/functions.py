"""User-function protocols: what a process function implements and what it is given."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from lockgate.engine.clock import Clock
from lockgate.engine.state import KeyedStateStore, ValueState, ValueStateDescriptor

__all__ = ["KeyedProcessFunction", "ProcessContext", "RuntimeContext"]

K = TypeVar("K")
I = TypeVar("I")  # noqa: E741 - Flink's name for the input type
O = TypeVar("O")  # noqa: E741 - Flink's name for the output type
V = TypeVar("V")


@dataclass(frozen=True, eq=False)
class RuntimeContext:
    """What a function learns at ``open``: where it runs, and access to its keyed state."""

    uid: str
    subtask_index: int
    parallelism: int
    max_parallelism: int
    clock: Clock
    keyed_state: KeyedStateStore

    def get_state(self, descriptor: ValueStateDescriptor[V]) -> ValueState[V]:
        """Return the ``ValueState`` that ``descriptor`` declares, scoped to the current key."""
        return self.keyed_state.value_state(descriptor)


class ProcessContext(Generic[K]):
    """What ``process_element`` is given besides the record: its key."""

    __slots__ = ("_store",)

    def __init__(self, store: KeyedStateStore) -> None:
        self._store = store

    def get_current_key(self) -> K:
        """Return the key of the record being processed."""
        return self._store.current_key  # type: ignore[no-any-return]


class KeyedProcessFunction(Generic[K, I, O]):
    """A function over a keyed stream with per-key state.

    ``open`` runs once per subtask before the first record: declare state there with
    ``context.get_state(ValueStateDescriptor(...))``. ``process_element`` runs for each
    record with the state scoped to the record's key, and returns (or yields) the records to
    emit; returning ``None`` emits nothing. ``close`` runs once at the end.
    """

    def open(self, context: RuntimeContext) -> None:
        """Declare state and acquire resources."""

    def process_element(self, value: I, ctx: ProcessContext[K]) -> Iterable[O] | None:
        """Handle one record; return or yield the records to emit."""
        raise NotImplementedError(f"{type(self).__name__} must implement process_element")

    def close(self) -> None:
        """Release resources."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
