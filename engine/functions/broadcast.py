"""The broadcast state pattern: a keyed stream reads state that a broadcast stream writes.

``keyed.connect(rules.broadcast(RULES))`` sends every record of ``rules`` to every subtask
of the operator, where ``KeyedBroadcastProcessFunction.process_broadcast_element`` may
change the broadcast state declared by ``RULES`` (a ``MapStateDescriptor``), and
``process_element`` reads it, read-only, for the keyed records (Flink's pattern for dynamic
rules, thresholds and configuration). Every subtask applies the same broadcast records in
the same order, so their broadcast states stay equal; checkpoints keep it, and a restore at
another parallelism gives every subtask a copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from lockgate.engine.functions.process import ProcessContext, RuntimeContext
from lockgate.engine.functions.side_outputs import (
    OutputTag,
    SideOutputCollector,
    emit_to_side_output,
)
from lockgate.engine.functions.timers import TimerService
from lockgate.engine.state import KeyedStateBackend, MapState, MapStateDescriptor
from lockgate.engine.state.operator_state import OperatorStateStore

__all__ = [
    "BroadcastContext",
    "BroadcastProcessSpec",
    "BroadcastStates",
    "KeyedBroadcastProcessFunction",
    "ReadOnlyBroadcastContext",
    "ReadOnlyMapState",
]

K = TypeVar("K")
I = TypeVar("I")  # noqa: E741 - Flink's name for the input type
B = TypeVar("B")
O = TypeVar("O")  # noqa: E741 - Flink's name for the output type
UK = TypeVar("UK")
UV = TypeVar("UV")


class ReadOnlyMapState(Generic[UK, UV]):
    """A broadcast state as ``process_element`` sees it: readable, not writable.

    Only ``process_broadcast_element`` may change broadcast state: it runs for the same
    records in the same order on every subtask, so the copies stay equal.
    """

    __slots__ = ("_state",)

    def __init__(self, state: MapState[UK, UV]) -> None:
        self._state = state

    def get(self, key: UK) -> UV | None:
        """Return the value under ``key``, or ``None``."""
        return self._state.get(key)

    def contains(self, key: UK) -> bool:
        """Whether ``key`` has a value."""
        return self._state.contains(key)

    def keys(self) -> list[UK]:
        """The keys, in insertion order."""
        return self._state.keys()

    def values(self) -> list[UV]:
        """The values, in key insertion order."""
        return self._state.values()

    def items(self) -> list[tuple[UK, UV]]:
        """The entries, in insertion order."""
        return self._state.items()

    def is_empty(self) -> bool:
        """Whether there is no entry."""
        return self._state.is_empty()

    def __repr__(self) -> str:
        return f"<ReadOnlyMapState {self._state!r}>"


@dataclass(frozen=True, slots=True)
class BroadcastProcessSpec:
    """What a broadcast process operator runs: the function, and the broadcast states it uses."""

    function: Any
    descriptors: tuple[MapStateDescriptor[Any, Any], ...]


class BroadcastStates:
    """The broadcast states an operator declared, by descriptor, from its operator state."""

    def __init__(
        self, store: OperatorStateStore, descriptors: Iterable[MapStateDescriptor[Any, Any]]
    ) -> None:
        self._store = store
        self._declared = {descriptor.name: descriptor for descriptor in descriptors}

    def get(self, descriptor: MapStateDescriptor[UK, UV]) -> MapState[UK, UV]:
        """Return the broadcast state ``descriptor`` declares.

        Raises:
            ValueError: ``descriptor`` was not given to ``broadcast(...)``.
        """
        if self._declared.get(descriptor.name) != descriptor:
            names = ", ".join(repr(name) for name in self._declared)
            raise ValueError(
                f"broadcast state {descriptor.name!r} was not declared: give its descriptor "
                f"to broadcast(...) (declared: {names})"
            )
        return self._store.get_broadcast_state(descriptor)


class ReadOnlyBroadcastContext(ProcessContext[K]):
    """``process_element``'s context: a keyed process context, plus broadcast state to read.

    The key, timers, side outputs and watermark are a ``ProcessContext``'s;
    ``get_broadcast_state`` gives a read-only view of a declared broadcast state.
    """

    __slots__ = ("_states",)

    def __init__(
        self,
        store: KeyedStateBackend,
        states: BroadcastStates,
        side_outputs: SideOutputCollector | None = None,
        timers: Callable[[], TimerService] | None = None,
        *,
        timestamped: bool = False,
    ) -> None:
        super().__init__(store, side_outputs, timers, timestamped=timestamped)
        self._states = states

    def get_broadcast_state(
        self, descriptor: MapStateDescriptor[UK, UV]
    ) -> ReadOnlyMapState[UK, UV]:
        """Return the broadcast state ``descriptor`` declares, read-only.

        Raises:
            ValueError: ``descriptor`` was not given to ``broadcast(...)``.
        """
        return ReadOnlyMapState(self._states.get(descriptor))


class BroadcastContext:
    """``process_broadcast_element``'s context: broadcast state to change, side outputs.

    A broadcast record has no key: keyed state and timers are not available here. Its
    timestamp is ``timestamp()`` (``None`` on a stream without event time), which side
    records and the records returned keep.
    """

    __slots__ = ("_side_outputs", "_states", "_timestamp", "_timestamped", "watermark")

    def __init__(
        self,
        states: BroadcastStates,
        side_outputs: SideOutputCollector | None = None,
        *,
        timestamped: bool = False,
    ) -> None:
        self._states = states
        self._side_outputs = side_outputs
        self.watermark = -float("inf")
        self._timestamp: float | None = None  # set by the operator per record
        self._timestamped = timestamped

    def get_broadcast_state(self, descriptor: MapStateDescriptor[UK, UV]) -> MapState[UK, UV]:
        """Return the broadcast state ``descriptor`` declares, to read and change.

        Raises:
            ValueError: ``descriptor`` was not given to ``broadcast(...)``.
        """
        return self._states.get(descriptor)

    def current_watermark(self) -> float:
        """Return the operator's current watermark (``-inf`` before the first one)."""
        return self.watermark

    def timestamp(self) -> float | None:
        """Return the broadcast record's event time, or ``None`` without event time."""
        return self._timestamp

    def output(self, tag: OutputTag[Any], value: Any) -> None:
        """Emit ``value`` to the side output ``tag``, with the record's timestamp.

        Raises:
            TypeError: ``tag`` is not an ``OutputTag``.
        """
        record = (self._timestamp, value) if self._timestamped else value
        emit_to_side_output(self._side_outputs, tag, record)


class KeyedBroadcastProcessFunction(Generic[K, I, B, O]):
    """A function over a keyed stream connected to a broadcast stream (Flink's).

    ``process_element`` runs for each keyed record with its key's state (declared in
    ``open``), timers, side outputs, and the broadcast state read-only
    (``ctx.get_broadcast_state(descriptor)``). ``process_broadcast_element`` runs on every
    subtask for each broadcast record and may change the broadcast state. Both return (or
    yield) the records to emit. Broadcast records are not ordered with keyed ones: a rule
    applies to the keyed records that come after it reached the subtask.
    """

    def open(self, context: RuntimeContext) -> None:
        """Declare keyed state and acquire resources."""

    def process_element(self, value: I, ctx: ReadOnlyBroadcastContext[K]) -> Iterable[O] | None:
        """Handle one keyed record; return or yield the records to emit."""
        raise NotImplementedError(f"{type(self).__name__} must implement process_element")

    def process_broadcast_element(self, value: B, ctx: BroadcastContext) -> Iterable[O] | None:
        """Handle one broadcast record (on every subtask); return or yield records to emit."""
        raise NotImplementedError(f"{type(self).__name__} must implement process_broadcast_element")

    def on_timer(self, timestamp: float, ctx: ReadOnlyBroadcastContext[K]) -> Iterable[O] | None:
        """Handle a timer of the current key that fired; return or yield records to emit."""
        return None

    def close(self) -> None:
        """Release resources."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
