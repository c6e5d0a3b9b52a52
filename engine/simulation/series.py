"""build_report: turn a run's samples and commits into per-interval series and summaries.

Pure: the recorder's samples hold cumulative counters, so an interval's value is the
difference of two samples of the same attempt (a restarted attempt starts from zero).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from lockgate.engine.graph.planning import ExecutionPlan, OperatorChain
from lockgate.engine.runtime.metrics import CheckpointRecordMetrics, SubtaskMetrics
from lockgate.engine.simulation.async_io import async_io_reports
from lockgate.engine.simulation.bottleneck import ChainLoad, find_bottleneck
from lockgate.engine.simulation.faults.fault import InjectedFault
from lockgate.engine.simulation.faults.recovery import Timeline, fault_reports
from lockgate.engine.simulation.histogram import LatencyHistogram
from lockgate.engine.simulation.recorder import CommitInterval, Recorder, Sample, SubtaskKey
from lockgate.engine.simulation.report import SimulationReport
from lockgate.engine.simulation.sections import (
    CheckpointReport,
    LatencySummary,
    SinkReport,
    SubtaskReport,
)

__all__ = ["ReportHeader", "build_report"]


@dataclass(frozen=True, slots=True)
class ReportHeader:
    """What the run was: the job, the seed, how long, how often sampled."""

    job_name: str
    seed: int
    until: float
    report_every: float


def build_report(
    header: ReportHeader,
    plan: ExecutionPlan,
    recorder: Recorder,
    sink_uids: Sequence[str],
    faults: Sequence[InjectedFault] = (),
) -> SimulationReport:
    """The report of a run of ``plan``: series per subtask and sink, the bottleneck, faults."""
    samples = recorder.samples
    subtasks = tuple(
        _subtask_report(plan, chain, index, samples)
        for chain in plan.chains
        for index in range(chain.parallelism)
    )
    uids = list(dict.fromkeys([*sink_uids, *recorder.sinks()]))
    sinks = tuple(_sink_report(uid, recorder.commits.get(uid, {}), samples) for uid in uids)
    bottleneck, reason = find_bottleneck(_loads(plan, subtasks))
    times = tuple(sample.time for sample in samples)
    timeline = Timeline(
        tuple(recorder.attempts), tuple(recorder.completed), tuple(recorder.restores)
    )
    return SimulationReport(
        header.job_name,
        header.seed,
        header.until,
        header.report_every,
        times,
        subtasks,
        sinks,
        bottleneck,
        reason,
        async_io=async_io_reports(samples),
        checkpoints=tuple(_checkpoint(r) for _, r in sorted(recorder.checkpoints.items())),
        faults=fault_reports(faults, timeline, times, sinks),
    )


def _checkpoint(record: CheckpointRecordMetrics) -> CheckpointReport:
    return CheckpointReport(
        record.checkpoint_id,
        record.status,
        record.trigger_time,
        record.duration,
        record.start_delay,
        record.alignment_duration,
        record.sync_duration,
        record.async_duration,
        record.state_size,
        record.unaligned,
        record.persisted_in_flight,
        record.failure_reason,
    )


@dataclass(frozen=True, slots=True)
class _Delta:
    busy: float
    backpressured: float
    idle: float
    records_in: int
    records_out: int


def _delta(now: SubtaskMetrics, before: SubtaskMetrics | None) -> _Delta:
    if before is None:
        return _Delta(
            now.busy_time, now.backpressured_time, now.idle_time, now.records_in, now.records_out
        )
    return _Delta(
        max(0.0, now.busy_time - before.busy_time),
        max(0.0, now.backpressured_time - before.backpressured_time),
        max(0.0, now.idle_time - before.idle_time),
        max(0, now.records_in - before.records_in),
        max(0, now.records_out - before.records_out),
    )


def _deltas(key: SubtaskKey, samples: Sequence[Sample]) -> list[_Delta | None]:
    deltas: list[_Delta | None] = []
    previous: Sample | None = None
    for sample in samples:
        now = sample.subtasks.get(key)
        same_attempt = previous is not None and previous.attempt == sample.attempt
        before = previous.subtasks.get(key) if previous is not None and same_attempt else None
        deltas.append(None if now is None else _delta(now, before))
        previous = sample
    return deltas


def _durations(samples: Sequence[Sample]) -> list[float]:
    times = [0.0, *(sample.time for sample in samples)]
    return [end - start for start, end in itertools.pairwise(times)]


def _subtask_report(
    plan: ExecutionPlan, chain: OperatorChain, index: int, samples: Sequence[Sample]
) -> SubtaskReport:
    key = (chain.uids, index)
    deltas = _deltas(key, samples)
    durations = _durations(samples)
    known = [delta for delta in deltas if delta is not None]
    busy, pressed, idle = (sum(getattr(d, name) for d in known) for name in _TIMES)
    total = busy + pressed + idle
    has_inputs = bool(plan.inputs(chain))
    return SubtaskReport(
        subtask=f"'{chain.name}' {index + 1}/{chain.parallelism}",
        chain=chain.name,
        uids=chain.uids,
        index=index,
        parallelism=chain.parallelism,
        busy_ratio=busy / total if total else 0.0,
        backpressured_ratio=pressed / total if total else 0.0,
        idle_ratio=idle / total if total else 0.0,
        records_in=sum(d.records_in for d in known),
        records_out=sum(d.records_out for d in known),
        busy_time_ms_per_second=_per_second(deltas, durations, "busy", 1000.0),
        backpressured_time_ms_per_second=_per_second(deltas, durations, "backpressured", 1000.0),
        idle_time_ms_per_second=_per_second(deltas, durations, "idle", 1000.0),
        records_in_per_second=_per_second(deltas, durations, "records_in", 1.0),
        records_out_per_second=_per_second(deltas, durations, "records_out", 1.0),
        mailbox_fill=_fills(samples, key, "mailbox_fill") if has_inputs else None,
        output_fill=_fills(samples, key, "output_fill") if plan.outputs(chain) else None,
    )


_TIMES = ("busy", "backpressured", "idle")


def _per_second(
    deltas: Sequence[_Delta | None], durations: Sequence[float], name: str, scale: float
) -> tuple[float | None, ...]:
    return tuple(
        None if delta is None or not duration else getattr(delta, name) * scale / duration
        for delta, duration in zip(deltas, durations, strict=True)
    )


def _fills(samples: Sequence[Sample], key: SubtaskKey, name: str) -> tuple[float | None, ...]:
    """The live metric ``name`` (a fill) of subtask ``key`` at each sample."""
    return tuple(
        getattr(sample.subtasks[key], name) if key in sample.subtasks else None
        for sample in samples
    )


def _loads(plan: ExecutionPlan, subtasks: Sequence[SubtaskReport]) -> list[ChainLoad]:
    loads = []
    for chain in plan.chains:
        own = [subtask for subtask in subtasks if subtask.uids == chain.uids]
        loads.append(
            ChainLoad(
                chain.chain_id,
                chain.name,
                chain.uids,
                busy=sum(s.busy_ratio for s in own) / len(own),
                backpressured=sum(s.backpressured_ratio for s in own) / len(own),
                idle=sum(s.idle_ratio for s in own) / len(own),
                upstream=tuple(dict.fromkeys(e.upstream.chain_id for e in plan.inputs(chain))),
            )
        )
    return loads


def _sink_report(
    uid: str, commits: dict[int, CommitInterval], samples: Sequence[Sample]
) -> SinkReport:
    intervals = [commits.get(index) for index in range(len(samples))]
    durations = _durations(samples)
    latency, lag = LatencyHistogram(), LatencyHistogram()
    for interval in intervals:
        if interval is not None:
            latency.merge(interval.latency)
            lag.merge(interval.lag)
    duration = samples[-1].time if samples else 0.0
    return SinkReport(
        uid=uid,
        records=latency.count,
        throughput=latency.count / duration if duration else 0.0,
        in_engine_latency=_summary(latency),
        event_time_lag=_summary(lag),
        event_time_lag_growth=_growth(samples, intervals),
        records_per_second=tuple(
            (interval.records if interval else 0) / duration if duration else None
            for interval, duration in zip(intervals, durations, strict=True)
        ),
        in_engine_latency_p50=_quantiles(intervals, "latency", 0.5),
        in_engine_latency_p99=_quantiles(intervals, "latency", 0.99),
        in_engine_latency_p999=_quantiles(intervals, "latency", 0.999),
        event_time_lag_p50=_quantiles(intervals, "lag", 0.5),
        event_time_lag_p99=_quantiles(intervals, "lag", 0.99),
        event_time_lag_p999=_quantiles(intervals, "lag", 0.999),
    )


def _summary(histogram: LatencyHistogram) -> LatencySummary:
    return LatencySummary(
        histogram.count,
        histogram.mean,
        histogram.quantile(0.5),
        histogram.quantile(0.99),
        histogram.quantile(0.999),
        histogram.high if histogram.count else None,
    )


def _quantiles(
    intervals: Sequence[CommitInterval | None], name: str, q: float
) -> tuple[float | None, ...]:
    return tuple(
        None if interval is None else getattr(interval, name).quantile(q) for interval in intervals
    )


def _growth(samples: Sequence[Sample], intervals: Sequence[CommitInterval | None]) -> float | None:
    """The least-squares slope of each interval's mean lag against the interval's end."""
    points = [
        (sample.time, interval.lag.total / interval.lag.count)
        for sample, interval in zip(samples, intervals, strict=True)
        if interval is not None and interval.lag.count
    ]
    if len(points) < 2:
        return None
    mean_t = sum(t for t, _ in points) / len(points)
    mean_lag = sum(lag for _, lag in points) / len(points)
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    return sum((t - mean_t) * (lag - mean_lag) for t, lag in points) / spread
