"""Operators: the runtime form of map, filter, flat_map, reduce and process.

Each operator turns a batch of records into a batch of records with one plain call, so a
chain of operators costs one Python call per operator per batch, plus the user function per
record. Keyed operators take each record's key with the stream's key selector.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from lockgate.engine.checkpointing.channel_state import ChannelRecords
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.events import Watermark
from lockgate.engine.functions.broadcast import KeyedBroadcastProcessFunction
from lockgate.engine.functions.process import (
    CheckpointedFunction,
    FunctionInitializationContext,
    FunctionSnapshotContext,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    ProcessContext,
    RuntimeContext,
)
from lockgate.engine.functions.side_outputs import SideOutputCollector
from lockgate.engine.functions.timers import (
    TIMER_STATES,
    KeyedTimers,
    TimeDomain,
    TimerQueue,
    TimerService,
)
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.restore.native import restore_keyed_state
from lockgate.engine.state import (
    KeyedSnapshot,
    KeyedStateBackend,
    KeyedStateSnapshot,
    KeyedStateStore,
    OperatorStateSnapshot,
    OperatorStateStore,
)
from lockgate.engine.state.native_snapshot import NativeSnapshots
from lockgate.engine.time.clock import Clock, SystemClock

__all__ = [
    "Operator",
    "StateCapture",
    "create_operator",
    "key_selector",
    "own_copy",
    "with_channel_state",
]


@dataclass(frozen=True, slots=True)
class StateCapture:
    """A consistent copy of one operator's state, taken on the event loop at a barrier.

    ``materialize`` turns it into plain data off the event loop (in a worker thread), while
    the operator goes on changing its live state. The capture of a chain's head or tail may
    carry the in-flight records of an unaligned checkpoint (``input_channels``,
    ``output_channels``); nothing changes them once captured.
    """

    uid: str
    keyed: KeyedSnapshot | None = None
    operator: OperatorStateSnapshot | None = None
    lists: dict[str, list[Any]] = field(default_factory=dict)
    input_channels: ChannelRecords = field(default_factory=dict)
    output_channels: ChannelRecords = field(default_factory=dict)

    @property
    def entries(self) -> int:
        """How many keyed entries the capture holds (its cost to encode)."""
        return 0 if self.keyed is None else self.keyed.entries

    def materialize(
        self, max_parallelism: int, base: KeyedStateSnapshot | None = None
    ) -> OperatorSnapshot:
        """Group keyed state by key group and merge everything into an ``OperatorSnapshot``.

        With ``base`` (the heap snapshot of this operator's last completed checkpoint) the
        result is incremental: only the keyed entries changed since, and the keys deleted.
        """
        keyed: dict[int, dict[str, dict[Any, Any]]] = {}
        deleted: dict[int, dict[str, list[Any]]] = {}
        if base is not None:
            assert isinstance(self.keyed, KeyedStateSnapshot), "deltas need a heap snapshot"
            keyed, deleted = self.keyed.delta_by_key_group(base, max_parallelism)
        elif self.keyed is not None:
            keyed = self.keyed.by_key_group(max_parallelism)
        state = self.operator
        return OperatorSnapshot(
            self.uid,
            keyed=keyed,
            lists={**(state.lists if state else {}), **self.lists},
            unions=dict(state.unions) if state else {},
            broadcast=dict(state.broadcast) if state else {},
            kinds={} if self.keyed is None else dict(self.keyed.kinds),
            deleted=deleted,
            is_delta=base is not None,
            input_channels=self.input_channels,
            output_channels=self.output_channels,
        )


def with_channel_state(
    captures: list[StateCapture],
    uid: str,
    *,
    inputs: ChannelRecords | None = None,
    outputs: ChannelRecords | None = None,
) -> list[StateCapture]:
    """Return ``captures`` with channel state added to the capture of ``uid`` (or a new one).

    Channels without records add nothing.
    """
    inputs = {key: records for key, records in (inputs or {}).items() if records}
    outputs = {key: records for key, records in (outputs or {}).items() if records}
    if not inputs and not outputs:
        return captures
    position = next((i for i, c in enumerate(captures) if c.uid == uid), len(captures))
    found = captures[position] if position < len(captures) else StateCapture(uid)
    merged = replace(
        found,
        input_channels={**found.input_channels, **inputs},
        output_channels={**found.output_channels, **outputs},
    )
    return [*captures[:position], merged, *captures[position + 1 :]]


class Operator:
    """One chained operator of a subtask: ``open``, ``process_batch`` per batch, ``close``.

    State is restored when the operator is built, before ``open``; ``capture`` takes the
    consistent copy of it that a checkpoint needs. The operator owns ``keyed_state`` (given,
    or a heap store): ``close`` closes it. An operator whose side outputs are read is given
    a ``side_outputs`` collector: the subtask drains it after each batch.
    """

    side_outputs: SideOutputCollector | None = None

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        self.uid = node.uid
        # state TTL reads the job's clock; errors about state name the operator
        self.keyed_state: KeyedStateBackend = (
            KeyedStateStore(clock, owner=f"operator '{node.uid}'")
            if keyed_state is None
            else keyed_state
        )
        self.operator_state = OperatorStateStore()
        self.restored = restored is not None
        self.function: Any = own_copy(node.function)
        if restored is not None:
            restore_keyed_state(self.keyed_state, restored)
            self.operator_state.restore(restored.lists, restored.unions, restored.broadcast)

    def open(self, context: RuntimeContext) -> None:
        """Prepare to process; called once before the first batch."""
        self._initialize_function_state()

    def send_side_outputs_to(self, collector: SideOutputCollector) -> None:
        """Collect the records this operator sends to side outputs in ``collector``."""
        self.side_outputs = collector

    def capture(self, checkpoint_id: int, *, native: bool = False) -> StateCapture:
        """Take a consistent copy of this operator's state for ``checkpoint_id``.

        With ``native`` (an incremental checkpoint), a backend that can (RocksDB) captures
        its keyed state as its own files (``NativeKeyedSnapshot``).
        """
        if isinstance(self.function, CheckpointedFunction):
            self.function.snapshot_state(FunctionSnapshotContext(checkpoint_id))
        keyed = self._snapshot_keyed(native=native) if self.keyed_state.has_states else None
        return StateCapture(self.uid, keyed, self.operator_state.snapshot())

    def _snapshot_keyed(self, *, native: bool) -> KeyedSnapshot:
        store = self.keyed_state
        if native and isinstance(store, NativeSnapshots):
            return store.native_snapshot()
        return store.snapshot()

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Tell the user function, if it listens, that ``checkpoint_id`` completed."""
        self._tell_function("notify_checkpoint_complete", checkpoint_id)

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Tell the user function, if it listens, that ``checkpoint_id`` was aborted."""
        self._tell_function("notify_checkpoint_aborted", checkpoint_id)

    def _tell_function(self, method: str, checkpoint_id: int) -> None:
        # Flink's CheckpointListener: any user function may define these two methods.
        listener = getattr(self.function, method, None)
        if callable(listener):
            listener(checkpoint_id)

    def _initialize_function_state(self) -> None:
        if isinstance(self.function, CheckpointedFunction):
            context = FunctionInitializationContext(
                operator_state_store=self.operator_state,
                keyed_state_store=self.keyed_state,
                is_restored=self.restored,
            )
            self.function.initialize_state(context)

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Return the records to pass on for a batch of input records."""
        raise NotImplementedError

    def process_watermark(self, watermark: Watermark) -> tuple[list[Any], Watermark | None]:
        """Return the records a watermark makes due, and the watermark to pass on (or ``None``).

        Most operators emit nothing and pass it on; one that holds it back (an async
        operator's fence) passes it on later itself.
        """
        return [], watermark

    def close(self) -> None:
        """Release what ``open`` acquired and the keyed state; called once, also after a failure."""
        self.keyed_state.close()


class MapOperator(Operator):
    """Emits ``fn(record)`` for each record."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Apply the function to each record."""
        fn = self.function
        return [fn(record) for record in records]


class FilterOperator(Operator):
    """Keeps the records for which the predicate holds."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Keep the records the predicate accepts."""
        predicate = self.function
        return [record for record in records if predicate(record)]


class FlatMapOperator(Operator):
    """Emits every element of the iterable ``fn(record)`` returns."""

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Concatenate the function's results."""
        out: list[Any] = []
        extend = out.extend
        fn = self.function
        for record in records:
            extend(fn(record))
        return out


class ProcessOperator(Operator):
    """Runs a ``KeyedProcessFunction``, its own copy per subtask, under each record's key."""

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        super().__init__(node, restored, clock, keyed_state=keyed_state)
        self._fn: KeyedProcessFunction[Any, Any, Any] | KeyedCoProcessFunction[Any, Any, Any, Any]
        self._fn = self.function  # process_batch (here or in a subclass) knows which
        self._key_of = key_selector(node)
        self._clock: Clock = clock or SystemClock()
        self._timers: KeyedTimers | None = None
        self._timer_service: TimerService | None = None
        self._context: ProcessContext[Any] = self._new_context(None)
        if restored is not None and TIMER_STATES & set(restored.kinds):
            self._service()  # the restored timers fire without a new registration

    def process_watermark(self, watermark: Watermark) -> tuple[list[Any], Watermark | None]:
        """Fire the event-time timers the watermark reached, then pass it on."""
        self._context.watermark = watermark.timestamp
        if self._timers is None:
            return [], watermark
        event_time = self._timers.event_time
        return self._fire(event_time, watermark.timestamp, TimeDomain.EVENT_TIME), watermark

    def fire_processing_timers(self, now: float) -> list[Any]:
        """Fire the processing-time timers the clock reached; return what they emit."""
        if self._timers is None:
            return []
        return self._fire(self._timers.processing_time, now, TimeDomain.PROCESSING_TIME)

    def next_processing_timer(self) -> float | None:
        """When the earliest processing-time timer fires, or ``None``."""
        return None if self._timers is None else self._timers.processing_time.next_timestamp()

    def _fire(self, queue: TimerQueue, time: float, domain: TimeDomain) -> list[Any]:
        out: list[Any] = []
        store, context, on_timer = self.keyed_state, self._context, self._fn.on_timer
        context.time_domain = domain
        try:
            for key, timestamp in queue.pop_due(time):
                store.current_key = key
                emitted = on_timer(timestamp, context)
                if emitted is not None:
                    out.extend(emitted)
        finally:
            context.time_domain = None
        return out

    def _new_context(self, side_outputs: SideOutputCollector | None) -> ProcessContext[Any]:
        return ProcessContext(self.keyed_state, side_outputs, timers=self._service)

    def _service(self) -> TimerService:
        if self._timer_service is None:
            self._timers = KeyedTimers(self.keyed_state)
            self._timer_service = TimerService(
                self._timers, self._clock, self.keyed_state, lambda: self._context.watermark
            )
        return self._timer_service

    def open(self, context: RuntimeContext) -> None:
        """Open the user function, which declares its state."""
        super().open(context)
        self._fn.open(context)

    def send_side_outputs_to(self, collector: SideOutputCollector) -> None:
        """Let the function's ``ctx.output`` send to ``collector``."""
        super().send_side_outputs_to(collector)
        self._context = self._new_context(collector)

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Call the function per record under the record's key; collect what it emits."""
        out: list[Any] = []
        extend = out.extend
        store, key_of, context = self.keyed_state, self._key_of, self._context
        process_element = self.function.process_element
        for record in records:
            store.current_key = key_of(record)
            emitted = process_element(record, context)
            if emitted is not None:
                extend(emitted)
        return out

    def close(self) -> None:
        """Close the user function, then the keyed state (also if the function fails)."""
        try:
            self._fn.close()
        finally:
            super().close()


_OWN_COPY = (
    CheckpointedFunction,
    KeyedProcessFunction,
    KeyedCoProcessFunction,
    KeyedBroadcastProcessFunction,
)


def own_copy(function: Any) -> Any:
    """Return the copy of ``function`` one subtask runs: its own, if the function is stateful."""
    # Every subtask runs its own copy of a stateful function object, as Flink runs its own
    # deserialized copy, so attributes set in open() are never shared between subtasks.
    stateful = isinstance(function, _OWN_COPY)
    return copy.deepcopy(function) if stateful else function


def key_selector(node: OperatorNode) -> Callable[[Any], Any]:
    """The key selector of a node the graph validated as keyed."""
    assert node.key_selector is not None, f"operator '{node.uid}' was validated as keyed"
    return node.key_selector


_OPERATORS: dict[OperatorKind, type[Operator]] = {
    OperatorKind.MAP: MapOperator,
    OperatorKind.FILTER: FilterOperator,
    OperatorKind.FLAT_MAP: FlatMapOperator,
    OperatorKind.PROCESS: ProcessOperator,
}


def create_operator(
    node: OperatorNode,
    restored: OperatorSnapshot | None = None,
    clock: Clock | None = None,
    *,
    keyed_state: KeyedStateBackend | None = None,
) -> Operator:
    """Build the runtime operator for a map, filter, flat_map or process node.

    The operator owns ``keyed_state`` once built (a new heap store if none is given).
    """
    return _OPERATORS[node.kind](node, restored, clock, keyed_state=keyed_state)
