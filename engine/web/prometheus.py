"""The Prometheus export: running jobs' metrics in Prometheus' text format.

``prometheus_text(jobs)`` is what ``GET /metrics`` answers with (``CONTENT_TYPE``);
``JobsCollector`` is the same as a ``prometheus_client`` collector, for a registry of the
host service's own. Names are Flink's, after a scope prefix, from the one table of names
(``lockgate.engine.runtime.metrics.names``): ``lockgate_task_busyTimeMsPerSecond``,
``lockgate_operator_asyncLatencySeconds``, ``lockgate_job_numberOfCompletedCheckpoints``.
Labels: ``job``; ``operator`` and ``subtask`` (a task's ``operator`` is the uid of its
chain's first operator, and ``chain`` names the whole chain); ``tag`` for side outputs.
Counters get Prometheus' ``_total`` suffix, rates and fills are gauges, latencies
histograms with cumulative buckets in seconds. Needs the ``prometheus`` extra
(``pip install 'lockgate[prometheus]'``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from lockgate.engine.api.client import JobClient
from lockgate.engine.runtime.metrics.model import (
    AsyncIoMetrics,
    JobMetrics,
    OperatorMetrics,
    SubtaskMetrics,
)
from lockgate.engine.runtime.metrics.names import (
    METRICS,
    MetricKind,
    MetricName,
    MetricScope,
    metric,
)

try:
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
    from prometheus_client.core import (
        CounterMetricFamily,
        GaugeMetricFamily,
        HistogramMetricFamily,
        Metric,
    )
except ImportError as error:  # pragma: no cover - the extra is part of the dev install
    raise ImportError(
        "the Prometheus export needs prometheus_client: pip install 'lockgate[prometheus]'"
    ) from error

__all__ = ["CONTENT_TYPE", "JobsCollector", "prometheus_text"]

CONTENT_TYPE: str = CONTENT_TYPE_LATEST
"""The content type of ``prometheus_text``'s answer: Prometheus' text format 0.0.4."""

_TASK_LABELS = ["job", "operator", "subtask", "chain"]
_OPERATOR_LABELS = ["job", "operator", "subtask"]
_ASYNC_FIELDS = (
    "capacity",
    "in_flight",
    "queued",
    "backlog",
    "calls",
    "completed",
    "retries",
    "timeouts",
    "failures",
)
_RECORD_FIELDS = (
    "records_in",
    "records_out",
    "records_in_per_second",
    "records_out_per_second",
)
_LATEST_FIELDS = (
    "duration",
    "state_size",
    "alignment_duration",
    "start_delay",
    "sync_duration",
    "async_duration",
    "persisted_in_flight",
    "unaligned",
)


def prometheus_text(jobs: Iterable[JobClient]) -> bytes:
    """The metrics of ``jobs`` now, in Prometheus' text format (served as ``CONTENT_TYPE``)."""
    return generate_latest(JobsCollector(jobs))


class JobsCollector:
    """A ``prometheus_client`` collector over running jobs: each scrape reads their metrics.

    ``jobs`` is read anew on every ``collect``, so a live collection (a dict's values) may
    gain and lose jobs between scrapes. Every job's metrics are read once per scrape.
    """

    def __init__(self, jobs: Iterable[JobClient]) -> None:
        self.jobs = jobs

    def collect(self) -> Iterator[Metric]:
        """One family per metric name, with a sample per job, operator and subtask."""
        families = _Families()
        for job in list(self.jobs):
            families.add_job(job.metrics())
        yield from families.all()

    def __repr__(self) -> str:
        return f"<JobsCollector {self.jobs!r}>"


class _Families:
    """The metric families of one scrape, made as their first sample comes."""

    def __init__(self) -> None:
        self._families: dict[str, Metric] = {}

    def all(self) -> list[Metric]:
        return list(self._families.values())

    def add_job(self, metrics: JobMetrics) -> None:
        job = metrics.job_name
        for subtask in metrics.subtasks:
            self._add_task(job, subtask)
            self._add_operators(job, subtask)
        self._add_checkpoints(job, metrics)

    def _add_task(self, job: str, subtask: SubtaskMetrics) -> None:
        labels = [job, subtask.uids[0], str(subtask.subtask_index), subtask.chain]
        for name in METRICS:
            if name.scope is MetricScope.TASK:
                self._sample(name, _TASK_LABELS, labels, getattr(subtask, name.field))

    def _add_operators(self, job: str, subtask: SubtaskMetrics) -> None:
        index = str(subtask.subtask_index)
        for counted in subtask.operators:
            self._add_records(job, counted)
        dropped = metric(MetricScope.OPERATOR, "late_records_dropped")
        for uid, count in subtask.late_records_dropped.items():
            self._sample(dropped, _OPERATOR_LABELS, [job, uid, index], count)
        side = metric(MetricScope.OPERATOR, "side_output_records")
        producer = subtask.uids[-1]
        for tag, count in subtask.side_output_records.items():
            self._sample(side, [*_OPERATOR_LABELS, "tag"], [job, producer, index, tag], count)
        splits = metric(MetricScope.OPERATOR, "split_watermarks")
        source = subtask.uids[0]
        for split, watermark in subtask.split_watermarks.items():
            self._sample(
                splits, [*_OPERATOR_LABELS, "split"], [job, source, index, split], watermark
            )
        for calls in subtask.async_io:
            self._add_async(job, calls)

    def _add_records(self, job: str, counted: OperatorMetrics) -> None:
        labels = [job, counted.uid, str(counted.subtask_index)]
        for field in _RECORD_FIELDS:
            name = metric(MetricScope.OPERATOR, field)
            self._sample(name, _OPERATOR_LABELS, labels, getattr(counted, field))

    def _add_async(self, job: str, calls: AsyncIoMetrics) -> None:
        labels = [job, calls.uid, str(calls.subtask_index)]
        for field in _ASYNC_FIELDS:
            name = metric(MetricScope.OPERATOR, field)
            self._sample(name, _OPERATOR_LABELS, labels, getattr(calls, field))
        name = metric(MetricScope.OPERATOR, "latency")
        family = self._family(name, _OPERATOR_LABELS)
        latency = calls.latency
        buckets = [(_bound(b), c) for b, c in zip(latency.bounds, latency.buckets, strict=True)]
        assert isinstance(family, HistogramMetricFamily)
        family.add_metric(labels, [*buckets, ("+Inf", latency.count)], latency.sum)

    def _add_checkpoints(self, job: str, metrics: JobMetrics) -> None:
        checkpoints = metrics.checkpoints
        self._sample(metric(MetricScope.JOB, "attempt"), ["job"], [job], metrics.attempt)
        for field in ("completed", "failed", "in_progress"):
            value = getattr(checkpoints, field)
            self._sample(metric(MetricScope.JOB, field), ["job"], [job], value)
        latest = checkpoints.latest_completed
        if latest is None:
            return
        for field in _LATEST_FIELDS:
            value = getattr(latest, field)
            self._sample(metric(MetricScope.JOB, field), ["job"], [job], value)

    def _sample(self, name: MetricName, keys: list[str], labels: list[str], value: Any) -> None:
        if value is None:  # a watermark before the first one: no sample
            return
        family = self._family(name, keys)
        assert isinstance(family, CounterMetricFamily | GaugeMetricFamily)
        family.add_metric(labels, float(value))

    def _family(self, name: MetricName, keys: list[str]) -> Metric:
        family = self._families.get(name.prometheus)
        if family is None:
            family = self._families[name.prometheus] = _new_family(name, keys)
        return family


def _new_family(name: MetricName, labels: list[str]) -> Metric:
    documentation = f"{name.description} ({name.unit})"
    if name.kind is MetricKind.COUNTER:
        return CounterMetricFamily(name.prometheus, documentation, labels=labels)
    if name.kind is MetricKind.HISTOGRAM:
        return HistogramMetricFamily(name.prometheus, documentation, labels=labels)
    return GaugeMetricFamily(name.prometheus, documentation, labels=labels)


def _bound(bound: float) -> str:
    return repr(float(bound))
