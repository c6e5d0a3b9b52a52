"""The sections of a simulation report: one per subtask, one per sink, latency summaries.

The metric names are the live metrics' (``job.metrics()``, named once in
``lockgate.engine.runtime.metrics.names``): per subtask and per interval of virtual time,
``busy_time_ms_per_second``, ``backpressured_time_ms_per_second`` and
``idle_time_ms_per_second``, ``records_in_per_second`` and ``records_out_per_second``,
``mailbox_fill`` (its input channels) and ``output_fill`` (the channels it sends to), each
sampled from the live metrics; per modelled sink, records committed per second and the
in-engine latency and event-time lag of those records.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "LIVE_NAMES",
    "AsyncIoReport",
    "CheckpointReport",
    "LatencySummary",
    "Series",
    "SinkReport",
    "SubtaskReport",
]

LIVE_NAMES: dict[str, tuple[str, ...]] = {
    "SubtaskReport": (
        "busy_time_ms_per_second",
        "backpressured_time_ms_per_second",
        "idle_time_ms_per_second",
        "records_in_per_second",
        "records_out_per_second",
        "mailbox_fill",
        "output_fill",
        "records_in",
        "records_out",
    ),
    "AsyncIoReport": (
        "capacity",
        "calls",
        "completed",
        "retries",
        "failures",
        "latency",
        "in_flight",
        "queued",
        "backlog",
    ),
    "CheckpointReport": (
        "duration",
        "start_delay",
        "alignment_duration",
        "sync_duration",
        "async_duration",
        "state_size",
        "unaligned",
        "persisted_in_flight",
    ),
}
"""The report's fields named after a live metric (``runtime/metrics/names.py``), per section.

The one list to align when a live metric is renamed: a test holds every name here to a
field of its section and to an entry of ``METRICS``.
"""

Series = tuple[float | None, ...]
"""One value per interval of a report, ``None`` where there was nothing to measure."""


@dataclass(frozen=True, slots=True)
class LatencySummary:
    """Durations over a whole run, in seconds; ``None`` where nothing was measured.

    Count, mean and maximum are exact, the percentiles within 0.5%.
    """

    count: int
    mean: float | None
    p50: float | None
    p99: float | None
    p999: float | None
    max: float | None


@dataclass(frozen=True, slots=True)
class SubtaskReport:
    """One subtask over the run: where its time went, its traffic, its channels' fill.

    Each series has one value per interval of ``report_every`` seconds (the report's
    ``times`` end them). The ratios are over the whole run and add up to 1.
    ``mailbox_fill`` is ``None`` for a chain with no input channel (a source's),
    ``output_fill`` for one with no output channel (a sink's).
    """

    subtask: str
    chain: str
    uids: tuple[str, ...]
    index: int
    parallelism: int
    busy_ratio: float
    backpressured_ratio: float
    idle_ratio: float
    records_in: int
    records_out: int
    busy_time_ms_per_second: Series
    backpressured_time_ms_per_second: Series
    idle_time_ms_per_second: Series
    records_in_per_second: Series
    records_out_per_second: Series
    mailbox_fill: Series | None
    output_fill: Series | None


@dataclass(frozen=True, slots=True)
class SinkReport:
    """One modelled sink over the run: what it committed, how late, and how the lag grew.

    In-engine latency runs from a record's admission by its source to its commit;
    event-time lag from its intended arrival to its commit, so time spent waiting outside
    a backpressured job counts (no coordinated omission). ``event_time_lag_growth`` is the
    slope of the mean lag over the run, in seconds per second: about 0 for a job that
    keeps up. The per-interval series are ``None`` where nothing committed.
    """

    uid: str
    records: int
    throughput: float
    in_engine_latency: LatencySummary
    event_time_lag: LatencySummary
    event_time_lag_growth: float | None
    records_per_second: Series
    in_engine_latency_p50: Series
    in_engine_latency_p99: Series
    in_engine_latency_p999: Series
    event_time_lag_p50: Series
    event_time_lag_p99: Series
    event_time_lag_p999: Series


@dataclass(frozen=True, slots=True)
class CheckpointReport:
    """One checkpoint of the run: how it ended and what each phase took, in seconds.

    The fields are the live metrics' (``CheckpointRecordMetrics``): ``trigger_time`` on
    the virtual clock, ``duration`` from trigger to end, and the maxima over the subtasks
    of ``start_delay`` (trigger to first barrier), ``alignment_duration``,
    ``sync_duration`` and ``async_duration``; ``state_size`` in bytes; ``unaligned`` and
    ``persisted_in_flight`` records for an unaligned one; ``failure_reason`` when aborted.
    """

    checkpoint_id: int
    status: str
    trigger_time: float
    duration: float
    start_delay: float
    alignment_duration: float
    sync_duration: float
    async_duration: float
    state_size: int
    unaligned: bool
    persisted_in_flight: int
    failure_reason: str | None


@dataclass(frozen=True, slots=True)
class AsyncIoReport:
    """One ``async_map`` operator in one subtask over the run: its calls and what waited.

    The series are the live metrics' (``AsyncIoMetrics``) at each sample: ``in_flight``
    calls running, ``queued`` records in the operator's queue, ``backlog`` records
    waiting outside it for room; ``completed_per_second`` calls returned per interval.
    ``mean_in_flight`` averages the samples, ``throughput`` is calls returned per second
    over the run, ``latency`` the calls' durations (exact count and mean, percentiles
    within 1%), so Little's law reads ``mean_in_flight ≈ throughput * latency.mean``.
    """

    uid: str
    subtask_index: int
    capacity: int
    calls: int
    completed: int
    retries: int
    failures: int
    throughput: float
    mean_in_flight: float | None
    latency: LatencySummary
    in_flight: Series
    queued: Series
    backlog: Series
    completed_per_second: Series
