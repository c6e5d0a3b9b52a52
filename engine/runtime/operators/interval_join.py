"""IntervalJoinOperator: Flink's IntervalJoinOperator, both sides buffered in keyed state.

Per record of either side (its event time is the timestamp it carries, given by a watermark
strategy upstream of its side): drop it if it is late, else add it to its side's buffer under its
event time, join it with every buffered record of the other side within the bounds, and set
an event-time timer at its cleanup time. Each joined record carries the later of its pair's
two timestamps (Flink's), whatever the record that came second. When the watermark reaches
a timer, the key's buffered records whose cleanup time has come are removed.

A record is late when its event time is at or below the operator's watermark, which says no
such record follows (as for windows). So a buffered record is removed only once no record
that could still join it can be on time: no pair is lost to the cleanup. Flink's ``isLate``
keeps a record at exactly its watermark (``timestamp < watermark``), where its watermark,
counted in whole milliseconds, is one millisecond below lockgate's float just under the same
bound: for whole milliseconds the two decide alike, but for a record at exactly Flink's
watermark, which Flink keeps and lockgate drops. The buffers
(``left-buffer``, ``right-buffer``: event time -> the records at that time) and the timers
are keyed state, so checkpoints, savepoints, recovery and rescaling carry them, and a key's
state is gone once the watermark passed the cleanup time of its last record.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.functions.interval_join import IntervalJoinSpec
from lockgate.engine.functions.process import KeyedCoProcessFunction, ProcessContext, RuntimeContext
from lockgate.engine.functions.process_join import ProcessJoinContext
from lockgate.engine.functions.side_outputs import OutputTag
from lockgate.engine.functions.timers import TimeDomain
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.runtime.operators.co_process import CoProcessOperator
from lockgate.engine.runtime.operators.stamped_process import StampedCoProcessOperator
from lockgate.engine.state import KeyedStateBackend, MapState, MapStateDescriptor
from lockgate.engine.time.clock import Clock

__all__ = [
    "LEFT_BUFFER",
    "RIGHT_BUFFER",
    "IntervalJoinOperator",
    "IntervalJoinRunner",
    "StampedIntervalJoinOperator",
]

LEFT_BUFFER = MapStateDescriptor[float, list[Any]]("left-buffer")
RIGHT_BUFFER = MapStateDescriptor[float, list[Any]]("right-buffer")


class IntervalJoinRunner(KeyedCoProcessFunction[Any, Any, Any, Any]):
    """Buffers both sides per key, joins each record with the other side, cleans by timer."""

    def __init__(self, spec: IntervalJoinSpec) -> None:
        self.spec = spec
        self.function = spec.function
        self.late_records_dropped = 0  # late, and no late-data side output for their side
        self._join_context: ProcessJoinContext | None = None
        self._joins_for: ProcessContext[Any] | None = None  # the context it wraps

    def open(self, context: RuntimeContext) -> None:
        """Declare both buffers; open the join function."""
        self.left = context.get_map_state(LEFT_BUFFER)
        self.right = context.get_map_state(RIGHT_BUFFER)
        self.function.open(context)

    def close(self) -> None:
        """Close the join function."""
        self.function.close()

    def process_element1(self, value: Any, ctx: ProcessContext[Any]) -> None:
        """A left record: buffer it and join it with the buffered right records in bounds."""
        spec = self.spec
        time = _event_time_of(value, ctx)
        if time <= ctx.watermark:
            self._late(value, spec.left_late, ctx)
            return None
        _add(self.left, time, value)
        joins, call, context = spec.joins, self.function.process_element, self._context(ctx)
        for other, rights in self.right.items():
            if joins(time, other):
                context.of(time, other)
                for right in rights:
                    _collect(ctx, call(value, right, context), max(time, other))
        ctx.timer_service().register_event_time_timer(spec.left_cleanup(time))
        return None

    def process_element2(self, value: Any, ctx: ProcessContext[Any]) -> None:
        """A right record: buffer it and join it with the buffered left records in bounds."""
        spec = self.spec
        time = _event_time_of(value, ctx)
        if time <= ctx.watermark:
            self._late(value, spec.right_late, ctx)
            return None
        _add(self.right, time, value)
        joins, call, context = spec.joins, self.function.process_element, self._context(ctx)
        for other, lefts in self.left.items():
            if joins(other, time):
                context.of(other, time)
                for left in lefts:
                    _collect(ctx, call(left, value, context), max(time, other))
        ctx.timer_service().register_event_time_timer(spec.right_cleanup(time))
        return None

    def on_timer(self, timestamp: float, ctx: ProcessContext[Any]) -> None:
        """Remove the key's buffered records whose cleanup time the watermark reached."""
        if ctx.time_domain is not TimeDomain.EVENT_TIME:
            return
        spec = self.spec
        _remove_due(self.left, spec.left_cleanup, timestamp)
        _remove_due(self.right, spec.right_cleanup, timestamp)

    def _late(self, value: Any, tag: OutputTag[Any] | None, ctx: ProcessContext[Any]) -> None:
        if tag is None:
            self.late_records_dropped += 1
        else:
            ctx.output(tag, value)

    def _context(self, ctx: ProcessContext[Any]) -> ProcessJoinContext:
        # The operator replaces its process context when side outputs are wired up.
        context = self._join_context
        if context is None or self._joins_for is not ctx:
            context = self._join_context = ProcessJoinContext(ctx)
            self._joins_for = ctx
        return context

    def __repr__(self) -> str:
        spec = self.spec
        return f"<IntervalJoinRunner between({spec.lower}, {spec.upper}) {spec.function!r}>"


def _add(buffer: MapState[float, list[Any]], time: float, value: Any) -> None:
    # A new list, never an append: a snapshot may still share the one stored.
    bucket = buffer.get(time)
    buffer.put(time, [value] if bucket is None else [*bucket, value])


def _collect(ctx: ProcessContext[Any], emitted: Any, timestamp: float) -> None:
    # The one place a joined pair's records leave: they carry the later of both times.
    for record in emitted or ():
        ctx._collect(record, timestamp)


def _event_time_of(value: Any, ctx: ProcessContext[Any]) -> float:
    time = ctx.timestamp()
    if time is None or not math.isfinite(time):
        raise ValueError(
            f"record {value!r} carries the timestamp {time!r}, and an interval join needs a "
            "finite one; a record without one came from an input with no watermark strategy "
            "(in a union or connect): call assign_timestamps_and_watermarks() on that input"
        )
    return time


def _remove_due(buffer: MapState[float, list[Any]], cleanup: Any, timestamp: float) -> None:
    for time in [time for time in buffer.keys() if cleanup(time) <= timestamp]:  # noqa: SIM118 - MapState
        buffer.remove(time)


class IntervalJoinOperator(CoProcessOperator):
    """Runs the interval join of an ``IntervalJoinSpec`` node over its two keyed inputs.

    Records of the right input arrive as ``SecondInput``; timers, side outputs (late data,
    and the join function's ``ctx.output``) and the watermark (the minimum of both inputs')
    are the keyed process operator's. ``late_records_dropped`` counts the records dropped
    as late since the operator started (sent to a late-data side output instead, when
    their side has one).
    """

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        runner = IntervalJoinRunner(node.function)
        super().__init__(replace(node, function=runner), restored, clock, keyed_state=keyed_state)

    @property
    def late_records_dropped(self) -> int:
        """Records dropped as late since the operator started."""
        runner = self.function  # the operator's own copy of the runner
        assert isinstance(runner, IntervalJoinRunner)
        return runner.late_records_dropped


class StampedIntervalJoinOperator(StampedCoProcessOperator, IntervalJoinOperator):
    """The interval join over records with timestamps: event time is what they carry."""
