"""The JSON documents of the REST API, read from a ``JobClient``: the one adapter of metrics.

Every endpoint's body is built here from what a job reports today (``job.status``,
``job.failures``, ``job.plan`` and ``job.metrics()``), so that a new metrics model changes
this module only. Times are milliseconds: instants since the epoch (on a ``SystemClock``;
on another clock, its own time), durations as spans. Every document is plain JSON data.

What today's metrics give, and so what these documents hold:

- A subtask's busy, idle and backpressured time are cumulative since its attempt started,
  so its ratios (and its backpressure level: ``OK`` up to 10% of its time backpressured,
  ``LOW`` up to 50%, ``HIGH`` above, as Flink's web UI labels them) are over that span,
  not over a recent window.
- Subtasks report no watermarks yet: ``/watermarks`` lists each subtask with ``null``.
- Checkpoint trigger times are on the job's clock; they are turned into the time of day
  here by the clock's offset now.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any, overload

from lockgate.engine.api.client import JobClient
from lockgate.engine.checkpointing.statistics import CheckpointRecord
from lockgate.engine.errors import OperatorError
from lockgate.engine.graph.planning import OperatorChain
from lockgate.engine.runtime.job.lifecycle import JobFailure
from lockgate.engine.runtime.metrics import SubtaskMetrics
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
    offset = _now(job) - job.clock.now()  # job clock -> time of day
    completed, failed, in_progress = stats.completed, stats.failed, stats.in_progress
    return {
        "counts": {
            "completed": completed,
            "failed": failed,
            "in_progress": in_progress,
            "total": completed + failed + in_progress,
        },
        "latest": {
            "completed": _checkpoint(stats.latest_completed, offset),
            "failed": _checkpoint(stats.latest_failed, offset),
        },
        "history": [_checkpoint(record, offset) for record in reversed(stats.history)],
    }


def exceptions_document(job: JobClient) -> dict[str, Any]:
    """``GET /jobs/{name}/exceptions``: every failed attempt, newest first, and the root."""
    entries = [_exception(failure) for failure in reversed(job.failures)]
    return {"root_exception": entries[0] if entries else None, "entries": entries}


def watermarks_document(job: JobClient) -> dict[str, Any]:
    """``GET /jobs/{name}/watermarks``: per chain and subtask its input and output watermark.

    Today's metrics carry no watermarks, so every value is ``null``.
    """
    subtasks = job.metrics().subtasks
    return {
        "vertices": [
            {
                "id": chain.chain_id,
                "name": chain.name,
                "subtasks": [
                    {"subtask": s.subtask_index, "input_watermark": None, "output_watermark": None}
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
        "backpressure_level": None if worst is None else backpressure_level(worst),
        "subtasks": documents,
    }


def _subtask(metrics: SubtaskMetrics) -> dict[str, Any]:
    total = metrics.busy_time + metrics.idle_time + metrics.backpressured_time
    ratio = metrics.backpressured_time / total if total > 0 else 0.0
    return {
        "subtask": metrics.subtask_index,
        "records_in": metrics.records_in,
        "records_out": metrics.records_out,
        "input_buffered": metrics.input_buffered,
        "input_capacity": metrics.input_capacity,
        "input_fill": metrics.mailbox_fill,
        "output_buffered": metrics.output_buffered,
        "busy_time": _ms(metrics.busy_time),
        "idle_time": _ms(metrics.idle_time),
        "backpressured_time": _ms(metrics.backpressured_time),
        "busy_ratio": metrics.busy_time / total if total > 0 else 0.0,
        "idle_ratio": metrics.idle_time / total if total > 0 else 0.0,
        "backpressure_ratio": ratio,
        "backpressure_level": backpressure_level(ratio),
        "async_io": [asdict(operator) for operator in metrics.async_io],
    }


def _checkpoint(record: CheckpointRecord | None, offset: float) -> dict[str, Any] | None:
    if record is None:
        return None
    reason = record.failure_reason
    return {
        "id": record.checkpoint_id,
        "status": record.status.name,
        "trigger_timestamp": _ms(record.trigger_time + offset),
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
        "failure_reason": None if reason is None else reason.name,
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
    found = [s for s in subtasks if s.uids == chain.uids]
    return sorted(found, key=lambda s: s.subtask_index)


def _now(job: JobClient) -> float:
    return wall_time_of(job.clock)()


@overload
def _ms(seconds: float) -> int: ...
@overload
def _ms(seconds: None) -> None: ...
def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)
