"""The one table of operator kinds: which runtime class runs each kind of graph node."""

from __future__ import annotations

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.graph.job_graph import OperatorKind, OperatorNode
from lockgate.engine.runtime.async_io.operator import AsyncWaitOperator
from lockgate.engine.runtime.async_io.stamped_operator import StampedAsyncWaitOperator
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.runtime.operators.basic import (
    FilterOperator,
    FlatMapOperator,
    MapOperator,
    ProcessOperator,
)
from lockgate.engine.runtime.operators.broadcast_process import BroadcastProcessOperator
from lockgate.engine.runtime.operators.co_process import CoProcessOperator
from lockgate.engine.runtime.operators.interval_join import (
    IntervalJoinOperator,
    StampedIntervalJoinOperator,
)
from lockgate.engine.runtime.operators.rolling import AggregateOperator, ReduceOperator
from lockgate.engine.runtime.operators.stamped import (
    StampedAggregateOperator,
    StampedFilterOperator,
    StampedFlatMapOperator,
    StampedMapOperator,
    StampedReduceOperator,
)
from lockgate.engine.runtime.operators.stamped_process import (
    StampedBroadcastProcessOperator,
    StampedCoProcessOperator,
    StampedProcessOperator,
    StampedWindowOperator,
)
from lockgate.engine.runtime.operators.timestamps import TimestampsOperator
from lockgate.engine.runtime.operators.window_operator import WindowOperator
from lockgate.engine.state import KeyedStateBackend
from lockgate.engine.time.clock import Clock

__all__ = ["OPERATOR_CLASSES", "STAMPED_OPERATOR_CLASSES", "create_operator"]

OPERATOR_CLASSES: dict[OperatorKind, type[Operator]] = {
    OperatorKind.MAP: MapOperator,
    OperatorKind.FILTER: FilterOperator,
    OperatorKind.FLAT_MAP: FlatMapOperator,
    OperatorKind.PROCESS: ProcessOperator,
    OperatorKind.REDUCE: ReduceOperator,
    OperatorKind.AGGREGATE: AggregateOperator,
    OperatorKind.CO_PROCESS: CoProcessOperator,
    OperatorKind.BROADCAST_PROCESS: BroadcastProcessOperator,
    OperatorKind.WINDOW: WindowOperator,
    OperatorKind.INTERVAL_JOIN: IntervalJoinOperator,
    OperatorKind.ASYNC_MAP: AsyncWaitOperator,
    OperatorKind.TIMESTAMPS: TimestampsOperator,
}
"""The runtime class of every kind of node a subtask runs (sources and sinks are its ends)."""

STAMPED_OPERATOR_CLASSES: dict[OperatorKind, type[Operator]] = {
    **OPERATOR_CLASSES,
    OperatorKind.MAP: StampedMapOperator,
    OperatorKind.FILTER: StampedFilterOperator,
    OperatorKind.FLAT_MAP: StampedFlatMapOperator,
    OperatorKind.PROCESS: StampedProcessOperator,
    OperatorKind.REDUCE: StampedReduceOperator,
    OperatorKind.AGGREGATE: StampedAggregateOperator,
    OperatorKind.CO_PROCESS: StampedCoProcessOperator,
    OperatorKind.BROADCAST_PROCESS: StampedBroadcastProcessOperator,
    OperatorKind.WINDOW: StampedWindowOperator,
    OperatorKind.INTERVAL_JOIN: StampedIntervalJoinOperator,
    OperatorKind.ASYNC_MAP: StampedAsyncWaitOperator,
}
"""The classes of nodes whose records carry timestamps (``OperatorNode.timestamped``).

The watermark strategy's operator reads the node's flag itself: it stamps records either way.
"""


def create_operator(
    node: OperatorNode,
    restored: OperatorSnapshot | None = None,
    clock: Clock | None = None,
    *,
    keyed_state: KeyedStateBackend | None = None,
) -> Operator:
    """Build the runtime operator of ``node``, restored from ``restored`` if given.

    The operator owns ``keyed_state`` once built (a new heap store if none is given). A
    node whose records carry timestamps gets the class of its kind that keeps them.
    """
    classes = STAMPED_OPERATOR_CLASSES if node.timestamped else OPERATOR_CLASSES
    return classes[node.kind](node, restored, clock, keyed_state=keyed_state)
