"""MetricsView: a job's metrics as ``job.metrics()`` returns them, rates and wall time included.

The subtasks count cumulatively (``SubtaskCounters``); the view keeps one ``RateWindow`` per
subtask of the running attempt and turns each reading into per-second rates over the
window. Readings happen when someone reads the metrics, never on a timer, so a job that
nobody watches pays nothing for them; one reading costs a clock read and a pass over the
subtasks, off the data path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from lockgate.engine.checkpointing.messages import SubtaskId
from lockgate.engine.checkpointing.statistics import CheckpointStatsSnapshot
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.runtime.metrics.checkpoints import checkpoint_metrics
from lockgate.engine.runtime.metrics.counters import SubtaskCounters, subtask_key
from lockgate.engine.runtime.metrics.model import JobMetrics, OperatorMetrics, SubtaskMetrics
from lockgate.engine.runtime.metrics.rates import RATE_WINDOW, RateWindow
from lockgate.engine.time.clock import Clock, wall_time_of

__all__ = ["MetricsView"]

_RATED = 7  # records and bytes in and out, busy, backpressured, idle; then 2 per operator


class MetricsView:
    """Reads a job's metrics: counters from the subtasks, rates over ``window`` seconds.

    The windows belong to one attempt: a new attempt's subtasks count from zero again, and
    their rates start afresh. Timestamps are on ``wall_time_of(clock)``.
    """

    def __init__(
        self, job_name: str, plan: ExecutionPlan, clock: Clock, *, window: float = RATE_WINDOW
    ) -> None:
        self.job_name = job_name
        self.clock = clock
        self.window = window
        self._wall = wall_time_of(clock)
        self._heads = {chain.chain_id: chain.uids[0] for chain in plan.chains}
        self._attempt = -1
        self._windows: dict[str, RateWindow] = {}

    def read(
        self,
        subtasks: Iterable[SubtaskCounters],
        checkpoints: CheckpointStatsSnapshot,
        *,
        attempt: int,
    ) -> JobMetrics:
        """The job's metrics now, from its subtasks' counters and its checkpoint statistics."""
        if attempt != self._attempt:
            self._attempt, self._windows = attempt, {}
        wall_now, clock_now = self._wall(), self.clock.now()
        return JobMetrics(
            job_name=self.job_name,
            attempt=attempt,
            timestamp=wall_now,
            rate_window=self.window,
            subtasks=[self._subtask(counters) for counters in subtasks],
            checkpoints=checkpoint_metrics(
                checkpoints, self._key_of, _wall_time_at(wall_now, clock_now)
            ),
        )

    def _key_of(self, subtask: SubtaskId) -> str:
        return subtask_key(self._heads[subtask.chain_id], subtask.subtask_index)

    def _subtask(self, c: SubtaskCounters) -> SubtaskMetrics:
        busy = c.busy_time
        values: list[float] = [c.records_in, c.records_out, c.bytes_in or 0, c.bytes_out or 0]
        values += [busy, c.backpressured_time, c.idle_time]
        values += [count for o in c.operators for count in (o.records_in, o.records_out)]
        window = self._windows.get(c.key)
        if window is None:  # a subtask's first reading: its rates run from its start
            initial = (0.0,) * (_RATED + 2 * len(c.operators))
            window = RateWindow(c.started, initial, window=self.window)
            self._windows[c.key] = window
        rates = window.rates(c.now, values)
        rate_in, rate_out, bytes_in_rate, bytes_out_rate, busy_rate, pressed_rate, idle_rate = (
            rates[:_RATED]
        )
        return SubtaskMetrics(
            key=c.key,
            chain=c.chain,
            uids=list(c.uids),
            subtask_index=c.subtask_index,
            parallelism=c.parallelism,
            finished=c.finished,
            records_in=c.records_in,
            records_out=c.records_out,
            records_in_per_second=rate_in,
            records_out_per_second=rate_out,
            bytes_in=c.bytes_in,
            bytes_out=c.bytes_out,
            bytes_in_per_second=None if c.bytes_in is None else bytes_in_rate,
            bytes_out_per_second=None if c.bytes_out is None else bytes_out_rate,
            busy_time=busy,
            idle_time=c.idle_time,
            backpressured_time=c.backpressured_time,
            busy_time_ms_per_second=busy_rate * 1000.0,
            backpressured_time_ms_per_second=pressed_rate * 1000.0,
            idle_time_ms_per_second=idle_rate * 1000.0,
            input_buffered=c.input_buffered,
            input_capacity=c.input_capacity,
            output_buffered=c.output_buffered,
            mailbox_fill=c.input_buffered / c.input_capacity if c.input_capacity else 0.0,
            output_fill=c.output_fill,
            current_input_watermark=_finite(c.input_watermark),
            current_output_watermark=_finite(c.output_watermark),
            watermark_alignment_drift=c.alignment_drift,
            split_watermarks={
                split: None if w is None else _finite(w) for split, w in c.split_watermarks.items()
            },
            late_records_dropped=dict(c.late_records_dropped),
            side_output_records=dict(c.side_output_records),
            operators=_operators(c, rates[_RATED:]),
            async_io=list(c.async_io),
            keyed_state=dict(c.keyed_state),
        )

    def __repr__(self) -> str:
        return f"<MetricsView {self.job_name!r} window={self.window} subtasks={len(self._windows)}>"


def _operators(c: SubtaskCounters, rates: Sequence[float]) -> list[OperatorMetrics]:
    return [
        OperatorMetrics(
            uid=o.uid,
            subtask_index=c.subtask_index,
            records_in=o.records_in,
            records_out=o.records_out,
            records_in_per_second=rates[2 * position],
            records_out_per_second=rates[2 * position + 1],
        )
        for position, o in enumerate(c.operators)
    ]


def _finite(watermark: float) -> float | None:
    return watermark if math.isfinite(watermark) else None


def _wall_time_at(wall_now: float, clock_now: float) -> Callable[[float], float]:
    def at(time: float) -> float:
        return wall_now - (clock_now - time)

    return at
