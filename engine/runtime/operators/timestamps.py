"""TimestampsOperator: the runtime form of ``assign_timestamps_and_watermarks``."""

from __future__ import annotations

import math
from operator import itemgetter
from typing import Any

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.events import Watermark, WatermarkStatus
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.state import KeyedStateBackend
from lockgate.engine.time.clock import Clock, SystemClock
from lockgate.engine.time.watermarks import WatermarkGenerator, WatermarkStrategy

__all__ = ["TimestampsOperator"]

_value = itemgetter(1)  # of a (timestamp, value) pair


class TimestampsOperator(Operator):
    """Gives each record its event time as its timestamp; generates watermarks from them.

    Records leave as ``(timestamp, value)`` pairs (see ``stamped``) if an operator
    downstream reads timestamps (the node ``emits_timestamps``), else as they came; a
    timestamp they had (the node is ``timestamped``) is replaced. As Flink's
    ``TimestampsAndWatermarksOperator``, it replaces the watermarks that reach it from
    upstream with its own, except the final one (end of input), which it passes on;
    upstream watermark statuses are replaced too. The subtask asks ``take_status`` and
    ``take_due`` after each batch and at each tick of its watermark timer.
    """

    def __init__(
        self,
        node: OperatorNode,
        restored: OperatorSnapshot | None = None,
        clock: Clock | None = None,
        *,
        keyed_state: KeyedStateBackend | None = None,
    ) -> None:
        super().__init__(node, restored, clock, keyed_state=keyed_state)
        strategy: WatermarkStrategy = node.function
        self.generator: WatermarkGenerator = strategy.create_generator()
        self.clock: Clock = clock or SystemClock()
        self._restamps = node.timestamped
        self._stamps = node.emits_timestamps

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Read the records' event times; pass them on, stamped with them if they are read."""
        values = list(map(_value, records)) if self._restamps else records
        times = self.generator.on_records(values, self.clock.now())
        if not self._stamps:
            return values
        return list(zip(times, values))  # noqa: B905 - one time per value, by construction

    def process_watermark(self, watermark: Watermark) -> tuple[list[Any], Watermark | None]:
        """Drop upstream watermarks: this operator's own replace them; pass the final one."""
        if watermark.timestamp != math.inf:
            return [], None
        self.generator.finish()
        return [], watermark

    def take_due(self, now: float, interval: float) -> Watermark | None:
        """The watermark to emit now, if it advanced and ``interval`` passed since the last."""
        return self.generator.take_due(now, interval)

    def mark_without_input(self) -> WatermarkStatus | None:
        """The subtask reads nothing: the idle status to emit, if not idle yet."""
        return self.generator.mark_without_input()

    def take_status(self, now: float) -> WatermarkStatus | None:
        """The subtask's new status at ``now``, if it went idle or active again."""
        return self.generator.take_status(now)

    @property
    def idle_timeout(self) -> float | None:
        """Seconds without a record after which the subtask goes idle, if it ever does."""
        return self.generator.idle_timeout
