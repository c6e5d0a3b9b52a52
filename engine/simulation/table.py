"""The plain-text table of a simulation report: subtasks, sinks, then the bottleneck."""

from __future__ import annotations

from collections.abc import Sequence

from lockgate.engine.simulation.faults.recovery import FaultReport
from lockgate.engine.simulation.sections import (
    AsyncIoReport,
    LatencySummary,
    SinkReport,
    SubtaskReport,
)

__all__ = ["render_table"]

SUBTASK_COLUMNS = ("subtask", "busy", "backpressured", "idle", "in/s", "out/s", "mailbox fill")
SINK_COLUMNS = ("sink", "records/s", "latency p50", "p99", "p999", "lag p50", "p99", "p999")
ASYNC_COLUMNS = ("async_map", "capacity", "in flight", "calls/s", "latency mean", "p99")
FAULT_COLUMNS = ("fault", "at", "struck", "recovery", "catch-up", "what happened")


def render_table(
    title: str,
    subtasks: Sequence[SubtaskReport],
    sinks: Sequence[SinkReport],
    bottleneck_reason: str,
    *,
    duration: float,
    faults: Sequence[FaultReport] = (),
    async_io: Sequence[AsyncIoReport] = (),
) -> str:
    """A title, the subtask table, async_map and sink tables, lag growth, faults, bottleneck."""
    parts = [title, "", _subtask_table(subtasks, duration)]
    if async_io:
        parts += ["", _async_table(async_io)]
    if sinks:
        parts += ["", _sink_table(sinks)]
        lag = [f"'{sink.uid}' {_growth(sink.event_time_lag_growth)}" for sink in sinks]
        parts += ["", f"event-time lag growth: {', '.join(lag)}"]
    if faults:
        parts += ["", _fault_table(faults)]
    parts += ["", f"{bottleneck_reason}."]
    return "\n".join(parts)


def _async_table(sections: Sequence[AsyncIoReport]) -> str:
    rows = [
        (
            f"'{section.uid}' {section.subtask_index + 1}",
            str(section.capacity),
            "-" if section.mean_in_flight is None else f"{section.mean_in_flight:.1f}",
            f"{section.throughput:.2f}",
            _seconds(section.latency.mean),
            _seconds(section.latency.p99),
        )
        for section in sections
    ]
    return _columns(ASYNC_COLUMNS, rows)


def _fault_table(faults: Sequence[FaultReport]) -> str:
    rows = [
        (
            fault.kind,
            f"{fault.at:g} s",
            "-" if fault.struck_at is None else f"{fault.struck_at:.3f} s",
            _seconds(fault.recovery_time),
            _seconds(fault.catch_up_time),
            fault.detail,
        )
        for fault in faults
    ]
    return _columns(FAULT_COLUMNS, rows)


def _subtask_table(subtasks: Sequence[SubtaskReport], duration: float) -> str:
    rows = [
        (
            subtask.subtask,
            f"{subtask.busy_ratio:.1%}",
            f"{subtask.backpressured_ratio:.1%}",
            f"{subtask.idle_ratio:.1%}",
            _rate(subtask.records_in, duration),
            _rate(subtask.records_out, duration),
            _mean_fill(subtask.mailbox_fill),
        )
        for subtask in subtasks
    ]
    return _columns(SUBTASK_COLUMNS, rows)


def _sink_table(sinks: Sequence[SinkReport]) -> str:
    rows = [
        (
            sink.uid,
            f"{sink.throughput:.2f}",
            *_percentiles(sink.in_engine_latency),
            *_percentiles(sink.event_time_lag),
        )
        for sink in sinks
    ]
    return _columns(SINK_COLUMNS, rows)


def _percentiles(summary: LatencySummary) -> tuple[str, str, str]:
    return (_seconds(summary.p50), _seconds(summary.p99), _seconds(summary.p999))


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def _rate(records: int, duration: float) -> str:
    return f"{records / duration:.2f}" if duration > 0 else "-"


def _mean_fill(fill: Sequence[float | None] | None) -> str:
    values = [value for value in fill or () if value is not None]
    return f"{sum(values) / len(values):.1%}" if values else "-"


def _growth(growth: float | None) -> str:
    return "-" if growth is None else f"{growth:+.3f} s per second"


def _columns(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [header, *rows]
    rendered = [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        for line in lines
    ]
    return "\n".join(line.rstrip() for line in rendered)
