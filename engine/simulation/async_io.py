"""async_io_reports: each ``async_map`` operator's calls over a run, from the samples. Pure."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from lockgate.engine.runtime.metrics import AsyncIoMetrics
from lockgate.engine.simulation.recorder import Sample
from lockgate.engine.simulation.sections import AsyncIoReport, LatencySummary, Series

__all__ = ["async_io_reports"]

_Key = tuple[str, int]


def async_io_reports(samples: Sequence[Sample]) -> tuple[AsyncIoReport, ...]:
    """One report per ``async_map`` operator and subtask that any sample shows."""
    keys = list(dict.fromkeys(key for sample in samples for key in _operators(sample)))
    return tuple(_report(key, samples) for key in keys)


def _operators(sample: Sample) -> dict[_Key, AsyncIoMetrics]:
    return {
        (metrics.uid, metrics.subtask_index): metrics
        for subtask in sample.subtasks.values()
        for metrics in subtask.async_io
    }


def _report(key: _Key, samples: Sequence[Sample]) -> AsyncIoReport:
    seen = [_operators(sample).get(key) for sample in samples]
    known = [metrics for metrics in seen if metrics is not None]
    last = known[-1]
    in_flight = tuple(None if m is None else float(m.in_flight) for m in seen)
    values = [value for value in in_flight if value is not None]
    duration = samples[-1].time if samples else 0.0
    attempts = _per_attempt_last(samples, seen)
    completed = sum(m.completed for m in attempts)
    return AsyncIoReport(
        uid=key[0],
        subtask_index=key[1],
        capacity=last.capacity,
        calls=sum(m.calls for m in attempts),
        completed=completed,
        retries=sum(m.retries for m in attempts),
        failures=sum(m.failures for m in attempts),
        throughput=completed / duration if duration else 0.0,
        mean_in_flight=sum(values) / len(values) if values else None,
        latency=_latency(attempts),
        in_flight=in_flight,
        queued=tuple(None if m is None else float(m.queued) for m in seen),
        backlog=tuple(None if m is None else float(m.backlog) for m in seen),
        completed_per_second=_per_second(samples, seen),
    )


def _per_attempt_last(
    samples: Sequence[Sample], seen: Sequence[AsyncIoMetrics | None]
) -> list[AsyncIoMetrics]:
    """The last sample of each attempt: its counters, which start from zero per attempt."""
    last: dict[int, AsyncIoMetrics] = {}
    for sample, metrics in zip(samples, seen, strict=True):
        if metrics is not None:
            last[sample.attempt] = metrics
    return list(last.values())


def _latency(attempts: Sequence[AsyncIoMetrics]) -> LatencySummary:
    if len(attempts) != 1:  # percentiles of several attempts' sketches do not add up
        count = sum(m.latency.count for m in attempts)
        total = sum(m.latency.sum for m in attempts)
        return LatencySummary(count, total / count if count else None, None, None, None, None)
    latency = attempts[0].latency
    return LatencySummary(
        latency.count, latency.mean, latency.p50, latency.p99, latency.p999, latency.max
    )


def _per_second(samples: Sequence[Sample], seen: Sequence[AsyncIoMetrics | None]) -> Series:
    rates: list[float | None] = []
    times = [0.0, *(sample.time for sample in samples)]
    previous: tuple[int, int] | None = None  # attempt, completed
    for (start, end), sample, metrics in zip(itertools.pairwise(times), samples, seen, strict=True):
        if metrics is None or end <= start:
            rates.append(None)
            continue
        before = previous[1] if previous is not None and previous[0] == sample.attempt else 0
        rates.append((metrics.completed - before) / (end - start))
        previous = (sample.attempt, metrics.completed)
    return tuple(rates)
