"""render_html: a simulation report as one self-contained HTML page with its plots.

The plots are plotly figures (the extra ``simulation``), with plotly's JavaScript inlined
once, so the page opens anywhere, offline: where each subtask's time went, how full its
channels were, what each sink committed and how late, each ``async_map``'s calls in
flight, and each checkpoint's duration; faults and outages are marked on the time axis.
Under them, the report's plain-text table.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from lockgate.engine.simulation.faults.recovery import FaultReport
from lockgate.engine.simulation.sections import (
    AsyncIoReport,
    CheckpointReport,
    Series,
    SinkReport,
    SubtaskReport,
)

__all__ = ["render_html", "write_html"]


class _Shown(Protocol):
    """What the page shows of a ``SimulationReport`` (named here, so neither imports the other)."""

    @property
    def job_name(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def bottleneck_reason(self) -> str: ...
    @property
    def times(self) -> tuple[float, ...]: ...
    @property
    def subtasks(self) -> tuple[SubtaskReport, ...]: ...
    @property
    def sinks(self) -> tuple[SinkReport, ...]: ...
    @property
    def async_io(self) -> tuple[AsyncIoReport, ...]: ...
    @property
    def checkpoints(self) -> tuple[CheckpointReport, ...]: ...
    @property
    def faults(self) -> tuple[FaultReport, ...]: ...
    def to_table(self) -> str: ...


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; }}
pre {{ background: #f6f6f6; padding: 1em; overflow-x: auto; font-size: 0.8em; }}
.plot {{ height: 360px; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p class="bottleneck">{bottleneck}</p>
{plots}
<h2>The report</h2>
<pre>{table}</pre>
</body>
</html>
"""


def write_html(report: _Shown, path: str | os.PathLike[str]) -> Path:
    """Write ``render_html(report)`` to ``path``; return the path."""
    target = Path(path)
    target.write_text(render_html(report), encoding="utf-8")
    return target


def render_html(report: _Shown) -> str:
    """The page: a title, the bottleneck, one plot per aspect, then the table."""
    go, pio = _plotly()
    figures = list(_figures(go, report))
    plots = "\n".join(
        pio.to_html(
            figure,
            full_html=False,
            include_plotlyjs=index == 0,  # plotly.js inlined once, for every plot
            div_id=f"plot-{index + 1}",
            default_height="360px",
        )
        for index, figure in enumerate(figures)
    )
    title = f"Simulation of '{report.job_name}', seed {report.seed}"
    return _PAGE.format(
        title=html.escape(title),
        bottleneck=html.escape(report.bottleneck_reason),
        plots=plots,
        table=html.escape(report.to_table()),
    )


def _plotly() -> tuple[Any, Any]:
    try:
        import plotly.graph_objects as go
        import plotly.io as pio
    except ImportError as error:
        raise ImportError(
            "report.to_html needs plotly, the extra 'simulation': "
            "pip install 'lockgate[simulation]'"
        ) from error
    return go, pio


def _figures(go: Any, report: _Shown) -> Iterator[Any]:
    yield _time_figure(
        go,
        report,
        "Backpressured time (ms per second)",
        "ms/s",
        [(s.subtask, s.backpressured_time_ms_per_second) for s in report.subtasks],
    )
    yield _time_figure(
        go,
        report,
        "Busy time (ms per second)",
        "ms/s",
        [(s.subtask, s.busy_time_ms_per_second) for s in report.subtasks],
    )
    fills = [(s.subtask, s.mailbox_fill) for s in report.subtasks if s.mailbox_fill is not None]
    if fills:
        yield _time_figure(go, report, "Input channel fill", "fill (0-1)", fills)
    if report.sinks:
        yield _time_figure(
            go,
            report,
            "Records committed per second",
            "records/s",
            [(f"'{sink.uid}'", sink.records_per_second) for sink in report.sinks],
        )
        yield _time_figure(
            go,
            report,
            "Latency and event-time lag (p99)",
            "seconds",
            [
                trace
                for sink in report.sinks
                for trace in (
                    (f"'{sink.uid}' in-engine latency p99", sink.in_engine_latency_p99),
                    (f"'{sink.uid}' event-time lag p99", sink.event_time_lag_p99),
                )
            ],
        )
    if report.async_io:
        yield _time_figure(
            go,
            report,
            "async_map calls in flight",
            "calls",
            [(f"'{a.uid}' {a.subtask_index + 1}", a.in_flight) for a in report.async_io],
        )
    if report.checkpoints:
        yield _checkpoint_figure(go, report)


def _time_figure(
    go: Any,
    report: _Shown,
    title: str,
    unit: str,
    traces: Sequence[tuple[str, Series]],
) -> Any:
    figure = go.Figure()
    for name, values in traces:
        figure.add_trace(go.Scatter(x=list(report.times), y=list(values), mode="lines", name=name))
    for fault in report.faults:
        if fault.struck_at is not None:
            figure.add_vline(x=fault.struck_at, line_dash="dash", line_color="firebrick")
            if fault.recovered_at is not None and fault.kind == "outage":
                figure.add_vrect(
                    x0=fault.struck_at,
                    x1=fault.recovered_at,
                    fillcolor="firebrick",
                    opacity=0.1,
                    line_width=0,
                )
    figure.update_layout(
        title=title,
        xaxis_title="virtual time (s)",
        yaxis_title=unit,
        margin={"t": 50, "b": 40},
        legend={"orientation": "h"},
    )
    return figure


def _checkpoint_figure(go: Any, report: _Shown) -> Any:
    checkpoints = report.checkpoints
    figure = go.Figure(
        go.Bar(
            x=[c.trigger_time for c in checkpoints],
            y=[c.duration for c in checkpoints],
            marker_color=[
                "#4c78a8" if c.status == "completed" else "firebrick" for c in checkpoints
            ],
            text=[f"{c.checkpoint_id}" for c in checkpoints],
            name="checkpoint duration",
        )
    )
    figure.update_layout(
        title="Checkpoint durations (red: failed)",
        xaxis_title="triggered at (s)",
        yaxis_title="seconds",
        margin={"t": 50, "b": 40},
    )
    return figure
