"""SimulationReport: series per interval, summaries, a plain-text table and JSON."""

from __future__ import annotations

import dataclasses
import json

import pytest

from lockgate.engine.runtime.metrics.names import METRICS
from lockgate.engine.simulation import (
    AsyncIoReport,
    CheckpointReport,
    Simulation,
    SimulationReport,
    SubtaskReport,
)
from lockgate.engine.simulation.sections import LIVE_NAMES
from tests.engine.jobs.scenarios import classic


@pytest.fixture(scope="module")
def report() -> SimulationReport:
    return Simulation(classic(), seed=3, until=20.0, report_every=2.0).run("classic")


def test_every_series_has_one_value_per_interval(report) -> None:
    assert report.times == tuple(float(t) for t in range(2, 21, 2))
    for subtask in report.subtasks:
        assert len(subtask.busy_time_ms_per_second) == len(report.times)
        assert len(subtask.records_out_per_second) == len(report.times)
    assert len(report.sink("out").records_per_second) == len(report.times)


def test_a_source_has_no_mailbox_fill_and_a_sink_no_output_fill(report) -> None:
    (source,) = report.of("events")
    (sink,) = report.of("out")

    assert (source.mailbox_fill, sink.output_fill) == (None, None)
    assert source.output_fill == sink.mailbox_fill


def test_the_json_holds_the_summaries_and_series_under_the_live_metrics_names(report) -> None:
    data = json.loads(report.to_json())

    (source, _) = data["subtasks"]
    assert {"busy_time_ms_per_second", "backpressured_time_ms_per_second"} <= set(source)
    assert {"idle_time_ms_per_second", "records_in_per_second", "mailbox_fill"} <= set(source)
    (sink,) = data["sinks"]
    assert set(sink["in_engine_latency"]) == {"count", "mean", "p50", "p99", "p999", "max"}
    assert data["bottleneck"]["uids"] == ["out"]
    assert (data["seed"], data["until"], data["report_every"]) == (3, 20.0, 2.0)


def test_the_table_shows_each_subtask_each_sink_and_the_bottleneck(report) -> None:
    lines = report.to_table().splitlines()

    assert lines[0] == "simulation of 'classic', seed 3: 20 virtual seconds, reported every 2 s"
    assert any(line.startswith("'events' 1/1") for line in lines)
    throughput = f"{report.sink('out').throughput:.2f}"
    assert any(line.split()[:2] == ["out", throughput] for line in lines)
    assert lines[-1].startswith("the bottleneck is 'out' (chain 'out'): busy 100.0%")
    assert str(report) == report.to_table()


def test_a_sink_the_report_does_not_hold_is_refused_naming_those_it_does(report) -> None:
    with pytest.raises(KeyError, match=r"no modelled sink 'nowhere'.*'out'"):
        report.sink("nowhere")


def test_the_reports_live_metric_names_are_the_live_metrics_own() -> None:
    live = {metric.field for metric in METRICS}
    sections = {"SubtaskReport": SubtaskReport, "AsyncIoReport": AsyncIoReport}
    sections["CheckpointReport"] = CheckpointReport

    for section, names in LIVE_NAMES.items():
        fields = {field.name for field in dataclasses.fields(sections[section])}
        assert set(names) <= fields, section
        assert set(names) <= live, section
