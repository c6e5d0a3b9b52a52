"""User-function protocols: what a process function implements and what it is given."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, overload, runtime_checkable

from lockgate.engine.functions.side_outputs import (
    OutputTag,
    SideOutputCollector,
    emit_to_side_output,
)
from lockgate.engine.functions.timers import TimeDomain, TimerService
from lockgate.engine.state import (
    AggregateFunction,
    AggregatingState,
    AggregatingStateDescriptor,
    KeyedStateBackend,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    OperatorStateStore,
    ReducingState,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueState,
    ValueStateDescriptor,
)
from lockgate.engine.time.clock import Clock

__all__ = [
    "AggregateFunction",
    "CheckpointedFunction",
    "FunctionInitializationContext",
    "FunctionSnapshotContext",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "ProcessContext",
    "RuntimeContext",
]

K = TypeVar("K")
I = TypeVar("I")  # noqa: E741 - Flink's name for the input type
O = TypeVar("O")  # noqa: E741 - Flink's name for the output type
I2 = TypeVar("I2")
V = TypeVar("V")
UK = TypeVar("UK")
UV = TypeVar("UV")
IN = TypeVar("IN")
ACC = TypeVar("ACC")
OUT = TypeVar("OUT")


@dataclass(frozen=True, eq=False)
class RuntimeContext:
    """What a function learns at ``open``: where it runs, and access to its state.

    Keyed state handles (``get_state`` and its aliases) read and write the state of the key
    of the record being processed; ``operator_state`` is the subtask's non-keyed state.
    """

    uid: str
    subtask_index: int
    parallelism: int
    max_parallelism: int
    clock: Clock
    keyed_state: KeyedStateBackend
    operator_state: OperatorStateStore = field(default_factory=OperatorStateStore)

    @overload
    def get_state(self, descriptor: ValueStateDescriptor[V]) -> ValueState[V]: ...
    @overload
    def get_state(self, descriptor: ListStateDescriptor[V]) -> ListState[V]: ...
    @overload
    def get_state(self, descriptor: MapStateDescriptor[UK, UV]) -> MapState[UK, UV]: ...
    @overload
    def get_state(self, descriptor: ReducingStateDescriptor[V]) -> ReducingState[V]: ...
    @overload
    def get_state(
        self, descriptor: AggregatingStateDescriptor[IN, ACC, OUT]
    ) -> AggregatingState[IN, OUT]: ...
    def get_state(self, descriptor: StateDescriptor) -> Any:
        """Return the keyed state that ``descriptor`` declares, scoped to the current key.

        Raises:
            ValueError: the name was declared before with another descriptor.
        """
        return self.keyed_state.get_state(descriptor)  # type: ignore[call-overload]

    def get_list_state(self, descriptor: ListStateDescriptor[V]) -> ListState[V]:
        """Return the keyed ``ListState`` that ``descriptor`` declares (PyFlink's name)."""
        return self.keyed_state.get_state(descriptor)

    def get_map_state(self, descriptor: MapStateDescriptor[UK, UV]) -> MapState[UK, UV]:
        """Return the keyed ``MapState`` that ``descriptor`` declares (PyFlink's name)."""
        return self.keyed_state.get_state(descriptor)

    def get_reducing_state(self, descriptor: ReducingStateDescriptor[V]) -> ReducingState[V]:
        """Return the keyed ``ReducingState`` that ``descriptor`` declares (PyFlink's name)."""
        return self.keyed_state.get_state(descriptor)

    def get_aggregating_state(
        self, descriptor: AggregatingStateDescriptor[IN, ACC, OUT]
    ) -> AggregatingState[IN, OUT]:
        """Return the keyed ``AggregatingState`` that ``descriptor`` declares (PyFlink's name)."""
        return self.keyed_state.get_state(descriptor)


@dataclass(frozen=True, slots=True, kw_only=True)
class FunctionInitializationContext:
    """What ``CheckpointedFunction.initialize_state`` is given.

    Attributes:
        operator_state_store: the subtask's operator state, restored if ``is_restored``.
        keyed_state_store: the subtask's keyed state, or ``None`` on a non-keyed stream.
        is_restored: whether the state comes from a checkpoint or savepoint.
    """

    operator_state_store: OperatorStateStore
    keyed_state_store: KeyedStateBackend | None
    is_restored: bool


@dataclass(frozen=True, slots=True)
class FunctionSnapshotContext:
    """What ``CheckpointedFunction.snapshot_state`` is given: the checkpoint being taken.

    The function is called on the event loop at the barrier, before any later record.
    """

    checkpoint_id: int


@runtime_checkable
class CheckpointedFunction(Protocol):
    """A function that keeps state of its own and writes it into managed state (Flink's).

    ``initialize_state`` runs once per subtask before ``open``, on a fresh start and on a
    restore (``context.is_restored``): declare operator (or keyed) state there and read what
    was restored. ``snapshot_state`` runs at each checkpoint barrier, just before the
    operator's state is copied: write into state whatever the function holds elsewhere, so
    the checkpoint holds exactly the function's state at the barrier.
    """

    def initialize_state(self, context: FunctionInitializationContext) -> None:
        """Declare state and load what was restored; called before ``open``."""

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        """Bring the state up to date for checkpoint ``context.checkpoint_id``."""


class ProcessContext(Generic[K]):
    """What ``process_element`` and ``on_timer`` are given: the key, time, timers, side outputs.

    The key is the one keyed state is scoped to while the record (or timer) is processed.
    The watermark is the operator's event time: no record at or below it will come.
    ``timestamp()`` is the event time of the record being processed (or the time of the
    timer firing), or ``None`` on a stream without event time. ``timer_service()``
    registers event-time and processing-time timers for the key; ``time_domain`` says which
    one fired while ``on_timer`` runs (``None`` otherwise). ``output`` sends a record to a
    side output, with the same timestamp; it leaves the operator with the records the
    function returns for the same input, before any barrier that follows that input.
    ``collect_with_timestamp`` emits a record with a timestamp of its own.
    """

    __slots__ = (
        "_out",
        "_side_outputs",
        "_store",
        "_timers",
        "_timestamp",
        "_timestamped",
        "time_domain",
        "watermark",
    )

    def __init__(
        self,
        store: KeyedStateBackend,
        side_outputs: SideOutputCollector | None = None,
        timers: Callable[[], TimerService] | None = None,
        *,
        timestamped: bool = False,
    ) -> None:
        self._store = store
        self.watermark = -math.inf
        self._side_outputs = side_outputs
        self._timers = timers
        self.time_domain: TimeDomain | None = None
        # Set by the operator: what timestamp() returns, and the list its output goes to.
        self._timestamp: float | None = None
        self._timestamped = timestamped
        self._out: list[Any] = []

    def timer_service(self) -> TimerService:
        """Return the service that reads time and sets timers for the current key.

        Raises:
            RuntimeError: outside a keyed process function's operator.
        """
        if self._timers is None:
            raise RuntimeError("timers are only available in a keyed process function")
        return self._timers()

    def get_current_key(self) -> K:
        """Return the key of the record being processed."""
        return self._store.current_key  # type: ignore[no-any-return]

    def current_watermark(self) -> float:
        """Return the operator's current watermark (``-inf`` before the first one)."""
        return self.watermark

    def timestamp(self) -> float | None:
        """Return the record's event time; in ``on_timer``, the timer's time.

        ``None`` when the stream has no event time (no watermark strategy upstream).
        """
        return self._timestamp

    def output(self, tag: OutputTag[V], value: V) -> None:
        """Emit ``value`` to the side output ``tag``; read it with ``stream.side_output(tag)``.

        The side record keeps the input's timestamp. A side output nobody reads drops its
        records, as in Flink.

        Raises:
            TypeError: ``tag`` is not an ``OutputTag``.
        """
        record = (self._timestamp, value) if self._timestamped else value
        emit_to_side_output(self._side_outputs, tag, record)

    def collect_with_timestamp(self, value: Any, timestamp: float) -> None:
        """Emit ``value`` stamped ``timestamp`` instead of the input's timestamp.

        It leaves in call order with what the function yields; before the records it
        returns. On a stream without event time the record carries no timestamp, as every
        record there.

        Raises:
            ValueError: ``timestamp`` is not a finite number.
        """
        if not math.isfinite(timestamp):
            raise ValueError(
                f"collect_with_timestamp() got the timestamp {timestamp!r} for {value!r}; "
                "event time must be a finite number"
            )
        self._collect(value, timestamp)

    def _collect(self, value: Any, timestamp: float) -> None:
        # Unchecked, for the engine's own operators: a count window's results carry the
        # global window's infinite max_timestamp, as Flink's carry Long.MAX_VALUE.
        self._out.append((timestamp, value) if self._timestamped else value)


class KeyedProcessFunction(Generic[K, I, O]):
    """A function over a keyed stream with per-key state.

    ``open`` runs once per subtask before the first record: declare state there with
    ``context.get_state(ValueStateDescriptor(...))`` or another keyed state descriptor.
    ``process_element`` runs for each record with the state scoped to the record's key, and
    returns (or yields) the records to emit; returning ``None`` emits nothing; it may also
    send records to side outputs with ``ctx.output(tag, value)`` and set timers with
    ``ctx.timer_service()``. ``on_timer`` runs under a timer's key when it fires, and emits
    the same way. ``close`` runs once at the end.
    """

    def open(self, context: RuntimeContext) -> None:
        """Declare state and acquire resources."""

    def process_element(self, value: I, ctx: ProcessContext[K]) -> Iterable[O] | None:
        """Handle one record; return or yield the records to emit (``ctx.output`` for sides)."""
        raise NotImplementedError(f"{type(self).__name__} must implement process_element")

    def on_timer(self, timestamp: float, ctx: ProcessContext[K]) -> Iterable[O] | None:
        """Handle a timer of the current key that fired; return or yield records to emit.

        ``ctx.time_domain`` says whether the watermark or the clock reached ``timestamp``.
        """
        return None

    def close(self) -> None:
        """Release resources."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class KeyedCoProcessFunction(Generic[K, I, I2, O]):
    """A function over two connected keyed streams, with per-key state shared by both.

    Flink's ``KeyedCoProcessFunction``: ``stream1.connect(stream2).key_by(key1, key2)``
    routes records of both inputs with equal keys to the same subtask, so that
    ``process_element1`` (a record of the first input) and ``process_element2`` (the second)
    see the same keyed state, declared in ``open``. Both return (or yield) the records to
    emit, may send to side outputs with ``ctx.output`` and set timers with
    ``ctx.timer_service()``; ``on_timer`` runs under a timer's key when it fires. The
    operator's watermark is the minimum of both inputs'. Typical use: enrich one stream with
    the latest value of another (rules, rates, profiles) per key.
    """

    def open(self, context: RuntimeContext) -> None:
        """Declare state and acquire resources."""

    def process_element1(self, value: I, ctx: ProcessContext[K]) -> Iterable[O] | None:
        """Handle one record of the first input; return or yield the records to emit."""
        raise NotImplementedError(f"{type(self).__name__} must implement process_element1")

    def process_element2(self, value: I2, ctx: ProcessContext[K]) -> Iterable[O] | None:
        """Handle one record of the second input; return or yield the records to emit."""
        raise NotImplementedError(f"{type(self).__name__} must implement process_element2")

    def on_timer(self, timestamp: float, ctx: ProcessContext[K]) -> Iterable[O] | None:
        """Handle a timer of the current key that fired; return or yield records to emit."""
        return None

    def close(self) -> None:
        """Release resources."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
