"""The JSON documents of the REST API, read from a ``JobClient``: the one adapter of metrics.

Every endpoint's body is built here from what a job reports (``job.status``,
``job.failures``, ``job.plan`` and ``job.metrics()``). Times are milliseconds: instants
since the epoch (on a ``SystemClock``; on another clock, its own time), durations as spans.
Every document is plain JSON data.

A subtask's busy, idle and backpressured shares are its ``*_time_ms_per_second`` over the
metrics' rolling window (Flink's ``busyTimeMsPerSecond`` and friends), and its backpressure
level is ``OK`` up to 10% of that time backpressured, ``LOW`` up to 50%, ``HIGH`` above, as
Flink's web UI labels it. Watermarks are the subtasks' current input and output watermarks.
A chain's records and bytes are its subtasks' sums, and its ``operators`` each operator's
records over its subtasks (bytes are ``null`` where a subtask's records cannot be pickled).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any, overload

from lockgate.engine.api.client import JobClient
from lockgate.engine.errors import OperatorError
from lockgate.engine.graph.planning import OperatorChain
from lockgate.engine.runtime.job.lifecycle import JobFailure
from lockgate.engine.runtime.metrics import OperatorMetrics, SubtaskMetrics
from lockgate.engine.runtime.metrics.checkpoints import CheckpointRecordMetrics
from lockgate.engine.time.clock import wall_time_of
from lockgate.engine.web.plan import plan_document

__all__ = [
    "BACKPRESSURE_HIGH_ABOVE",
    "BACKPRESSURE_OK_UP_TO",
    "backpressure_level",
    "checkpoints_document",
    "exceptions_document",
    "job_document",
    "jobs_document",
    "vertices_document",
    "watermarks_document",
]

BACKPRESSURE_OK_UP_TO = 0.10
"""A ratio of time backpressured up to this is ``OK``."""

BACKPRESSURE_HIGH_ABOVE = 0.50
"""A ratio of time backpressured above this is ``HIGH``; between the two, ``LOW``."""


def backpressure_level(ratio: float) -> str:
    """``OK`` (ratio <= 0.10), ``LOW`` (<= 0.50) or ``HIGH``, as Flink's web UI labels it."""
    if ratio <= BACKPRESSURE_OK_UP_TO:
        return "OK"
    return "LOW" if ratio <= BACKPRESSURE_HIGH_ABOVE else "HIGH"


def jobs_document(jobs: Iterable[JobClient]) -> dict[str, Any]:
    """``GET /jobs``: every job's overview."""
    return {"jobs": [_overview(job) for job in jobs]}


def job_document(job: JobClient) -> dict[str, Any]:
    """``GET /jobs/{name}``: the overview and the plan (chains, edges, parallelism)."""
    return {**_overview(job), "plan": plan_document(job.plan)}


def vertices_document(job: JobClient) -> dict[str, Any]:
    """``GET /jobs/{name}/vertices``: per chain its subtasks' metrics and backpressure."""
    subtasks = job.metrics().subtasks
    return {
        "timestamp": _ms(_now(job)),
        "vertices": [_vertex(chain, _of(chain, subtasks)) for chain in job.plan.chains],
    }


def checkpoints_document(job: JobClient) -> dict[str, Any]:
    """``GET /jobs/{name}/checkpoints``: counts, the latest completed and failed, history."""
    stats = job.metrics().checkpoints
    completed, failed, in_progress = stats.completed, stats.failed, stats.in_progress
    return {
        "counts": {
            "completed": completed,
            "failed": failed,
            "in_progress": in_progress,
            "total": completed + failed + in_progress,
        },
        "latest": {
            "completed": _checkpoint(stats.latest_completed),
            "failed": _checkpoint(stats.latest_failed),
        },
        "history": [_checkpoint(record) for record in reversed(stats.history)],
    }


def exceptions_document(job: JobClient) -> dict[str, Any]:
    """``GET /jobs/{name}/exceptions``: every failed attempt, newest first, and the root."""
    entries = [_exception(failure) for failure in reversed(job.failures)]
    return {"root_exception": entries[0] if entries else None, "entries": entries}


def watermarks_document(job: JobClient) -> dict[str, Any]:
    """``GET /jobs/{name}/watermarks``: per chain and subtask its input and output watermark.

    A watermark is ``null`` before the subtask's first one (and for a chain that has none).
    """
    subtasks = job.metrics().subtasks
    return {
        "vertices": [
            {
                "id": chain.chain_id,
                "name": chain.name,
                "subtasks": [
                    {
                        "subtask": s.subtask_index,
                        "input_watermark": s.current_input_watermark,
                        "output_watermark": s.current_output_watermark,
                    }
                    for s in _of(chain, subtasks)
                ],
            }
            for chain in job.plan.chains
        ]
    }


def _overview(job: JobClient) -> dict[str, Any]:
    start, end = _ms(job.start_time), _ms(job.end_time)
    return {
        "name": job.name,
        "status": job.status.name,
        "attempt": job.metrics().attempt,
        "start_time": start,
        "end_time": end,
        "duration": None if start is None else (end or _ms(_now(job))) - start,
        "failures": len(job.failures),
    }


def _vertex(chain: OperatorChain, subtasks: list[SubtaskMetrics]) -> dict[str, Any]:
    documents = [_subtask(s) for s in subtasks]
    worst = max((d["backpressure_ratio"] for d in documents), default=None)
    return {
        "id": chain.chain_id,
        "name": chain.name,
        "uids": list(chain.uids),
        "parallelism": chain.parallelism,
        "records_in": sum(s.records_in for s in subtasks),
        "records_out": sum(s.records_out for s in subtasks),
        "bytes_in": _sum_or_none(s.bytes_in for s in subtasks),
        "bytes_out": _sum_or_none(s.bytes_out for s in subtasks),
        "backpressure_level": None if worst is None else backpressure_level(worst),
        "operators": _chain_operators(chain, subtasks),
        "subtasks": documents,
    }


def _chain_operators(chain: OperatorChain, subtasks: list[SubtaskMetrics]) -> list[dict[str, Any]]:
    """Each operator of the chain with its records summed over the subtasks."""
    counted = [operator for s in subtasks for operator in s.operators]
    return [_operator_sum(uid, [o for o in counted if o.uid == uid]) for uid in chain.uids]


def _operator_sum(uid: str, subtasks: list[OperatorMetrics]) -> dict[str, Any]:
    fields = ("records_in", "records_out", "records_in_per_second", "records_out_per_second")
    return {"uid": uid, **{f: sum(getattr(o, f) for o in subtasks) for f in fields}}


def _sum_or_none(values: Iterable[int | None]) -> int | None:
    counted = list(values)
    return None if None in counted else sum(v for v in counted if v is not None)


def _subtask(metrics: SubtaskMetrics) -> dict[str, Any]:
    ratio = metrics.backpressured_time_ms_per_second / 1000.0
    return {
        "subtask": metrics.subtask_index,
        "key": metrics.key,
        "records_in": metrics.records_in,
        "records_out": metrics.records_out,
        "records_in_per_second": metrics.records_in_per_second,
        "records_out_per_second": metrics.records_out_per_second,
        "bytes_in": metrics.bytes_in,
        "bytes_out": metrics.bytes_out,
        "bytes_in_per_second": metrics.bytes_in_per_second,
        "bytes_out_per_second": metrics.bytes_out_per_second,
        "input_buffered": metrics.input_buffered,
        "input_capacity": metrics.input_capacity,
        "input_fill": metrics.mailbox_fill,
        "output_buffered": metrics.output_buffered,
        "output_fill": metrics.output_fill,
        "busy_time": _ms(metrics.busy_time),
        "idle_time": _ms(metrics.idle_time),
        "backpressured_time": _ms(metrics.backpressured_time),
        "busy_time_ms_per_second": metrics.busy_time_ms_per_second,
        "idle_time_ms_per_second": metrics.idle_time_ms_per_second,
        "backpressured_time_ms_per_second": metrics.backpressured_time_ms_per_second,
        "busy_ratio": metrics.busy_time_ms_per_second / 1000.0,
        "idle_ratio": metrics.idle_time_ms_per_second / 1000.0,
        "backpressure_ratio": ratio,
        "backpressure_level": backpressure_level(ratio),
        "late_records_dropped": metrics.late_records_dropped,
        "side_output_records": metrics.side_output_records,
        "operators": [_operator(operator) for operator in metrics.operators],
        "async_io": [asdict(operator) for operator in metrics.async_io],
    }


def _operator(operator: OperatorMetrics) -> dict[str, Any]:
    return {
        "uid": operator.uid,
        "records_in": operator.records_in,
        "records_out": operator.records_out,
        "records_in_per_second": operator.records_in_per_second,
        "records_out_per_second": operator.records_out_per_second,
    }


def _checkpoint(record: CheckpointRecordMetrics | None) -> dict[str, Any] | None:
    if record is None:
        return None
    return {
        "id": record.checkpoint_id,
        "status": record.status.upper(),
        "trigger_timestamp": _ms(record.trigger_timestamp),
        "end_to_end_duration": _ms(record.duration),
        "state_size": record.state_size,
        "num_subtasks": record.total,
        "num_acknowledged_subtasks": record.acknowledged,
        "alignment_duration": _ms(record.alignment_duration),
        "start_delay": _ms(record.start_delay),
        "sync_duration": _ms(record.sync_duration),
        "async_duration": _ms(record.async_duration),
        "unaligned": record.unaligned,
        "persisted_in_flight": record.persisted_in_flight,
        "failure_reason": record.failure_reason,
        "failure_message": record.failure_message or None,
    }


def _exception(failure: JobFailure) -> dict[str, Any]:
    error = failure.exception
    operator = error if isinstance(error, OperatorError) else None
    return {
        "attempt": failure.attempt,
        "timestamp": _ms(failure.time),
        "type": type(error).__name__,
        "message": str(error),
        "uid": None if operator is None else operator.uid,
        "subtask": None if operator is None else operator.subtask_index,
        "stacktrace": "".join(traceback.format_exception(error)),
    }


def _of(chain: OperatorChain, subtasks: Iterable[SubtaskMetrics]) -> list[SubtaskMetrics]:
    found = [s for s in subtasks if tuple(s.uids) == tuple(chain.uids)]
    return sorted(found, key=lambda s: s.subtask_index)


def _now(job: JobClient) -> float:
    return wall_time_of(job.clock)()


@overload
def _ms(seconds: float) -> int: ...
@overload
def _ms(seconds: None) -> None: ...
def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)
