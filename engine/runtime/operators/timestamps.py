"""TimestampsOperator: the runtime form of ``assign_timestamps_and_watermarks``."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from operator import itemgetter
from typing import Any, Protocol

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.events import Watermark, WatermarkStatus
from lockgate.engine.functions.process import RuntimeContext
from lockgate.engine.graph.job_graph import OperatorNode
from lockgate.engine.runtime.operators.base import Operator
from lockgate.engine.state import KeyedStateBackend
from lockgate.engine.time.clock import Clock, SystemClock
from lockgate.engine.time.multiplexer import CombinedOutput
from lockgate.engine.time.timestamps_and_watermarks import SplitRun, TimestampsAndWatermarks
from lockgate.engine.time.watermarks import WatermarkStrategy

__all__ = ["SplitsOfBatch", "TimestampsOperator"]


class SplitsOfBatch(Protocol):
    """Where the records of the batch just polled came from: a source head reading by split."""

    @property
    def split_runs(self) -> Sequence[SplitRun] | None:
        """The batch's records as runs of one split each (``None``: not told apart)."""

    @property
    def reader_idle(self) -> Collection[str] | None:
        """The splits the reader said were idle once it read the batch (from its start on)."""


_value = itemgetter(1)  # of a (timestamp, value) pair


class TimestampsOperator(Operator):
    """Gives each record its event time as its timestamp; generates watermarks from them.

    Records leave as ``(timestamp, value)`` pairs (see ``stamped``) if an operator
    downstream reads timestamps (the node ``emits_timestamps``), else as they came; a
    timestamp they had (the node is ``timestamped``) is replaced. As Flink's
    ``TimestampsAndWatermarksOperator``, it replaces the watermarks that reach it from
    upstream with its own, except the final one (end of input), which it passes on;
    upstream watermark statuses are replaced too. Chained first after a source that reads
    by split (``read_splits_from``), each split has its own generator, as Flink's
    per-split watermarks. After each batch the subtask takes ``take_changes`` (what
    punctuated generators emitted, each after the record it was emitted for); after each
    batch and at each tick of its watermark timer it asks ``on_periodic_emit``.
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
        self.strategy: WatermarkStrategy = node.function
        self.clock: Clock = clock or SystemClock()
        self._restamps = node.timestamped
        self._stamps = node.emits_timestamps
        self._batch_splits: SplitsOfBatch | None = None
        self._split_ids: list[str] | None = None
        self._watermarks: TimestampsAndWatermarks | None = None
        self.changes: list[tuple[int, CombinedOutput]] = []

    def read_splits_from(self, head: SplitsOfBatch, split_ids: Sequence[str]) -> None:
        """Give each of ``split_ids`` its own generator; ``head`` tells each record's split."""
        self._batch_splits, self._split_ids = head, list(split_ids)

    def open(self, context: RuntimeContext) -> None:
        """Make the generators of this subtask (or of each of its splits)."""
        super().open(context)
        self._watermarks = self._driver(context.subtask_index)

    @property
    def watermarks(self) -> TimestampsAndWatermarks:
        """The strategy applied to this subtask's records (made by ``open``)."""
        assert self._watermarks is not None, f"operator '{self.uid}' used before open()"
        return self._watermarks

    def process_batch(self, records: list[Any]) -> list[Any]:
        """Read the records' event times; pass them on, stamped with them if they are read."""
        values = list(map(_value, records)) if self._restamps else records
        splits, now = self._batch_splits, self.clock.now()
        if splits is None:
            times = self.watermarks.on_batch(values, now)
        else:
            times = self.watermarks.on_batch(values, now, splits.split_runs, splits.reader_idle)
        self.changes = self.watermarks.take_changes()
        if not self._stamps:
            return values
        return list(zip(times, values))  # noqa: B905 - one time per value, by construction

    def take_changes(self) -> list[tuple[int, CombinedOutput]]:
        """What the last batch made this subtask emit, each after that many of its records."""
        changes, self.changes = self.changes, []
        return changes

    def process_watermark(self, watermark: Watermark) -> tuple[list[Any], Watermark | None]:
        """Drop upstream watermarks: this operator's own replace them; pass the final one."""
        if watermark.timestamp != math.inf:
            return [], None
        self.watermarks.finish()
        return [], watermark

    def on_periodic_emit(self, now: float, interval: float) -> list[CombinedOutput]:
        """What the generators emit at ``now``, if ``interval`` passed since they were asked."""
        return self.watermarks.on_periodic_emit(now, interval)

    def mark_without_input(self) -> WatermarkStatus | None:
        """The subtask reads nothing: the idle status to emit, if not idle yet."""
        return self.watermarks.mark_without_input()

    @property
    def split_watermarks(self) -> dict[str, float | None]:
        """Each split's watermark (``None`` while idle); empty unless made split by split."""
        watermarks = self._watermarks
        return {} if watermarks is None else watermarks.split_watermarks

    def aligned_watermark(self) -> float | None:
        """The subtask's watermark for its alignment group: ``None`` while it is idle."""
        watermarks = self._watermarks
        if watermarks is None:
            return -math.inf
        return None if watermarks.idle else watermarks.current

    @property
    def idle_timeout(self) -> float | None:
        """Seconds without a record after which a split or the subtask goes idle, if ever."""
        return self.strategy.idle_timeout

    def _driver(self, subtask_index: int) -> TimestampsAndWatermarks:
        return TimestampsAndWatermarks(
            self.strategy,
            uid=self.uid,
            subtask_index=subtask_index,
            clock=self.clock,
            splits=self._split_ids,
        )
