"""The one table of metric names: every name is a field where it says, and the simulation's
report, the Prometheus export and the docs' page use the same names."""

from __future__ import annotations

import dataclasses
import re

import pytest

from lockgate.engine.runtime.metrics import (
    AsyncIoMetrics,
    CheckpointMetrics,
    CheckpointRecordMetrics,
    JobMetrics,
    OperatorMetrics,
    SubtaskMetrics,
)
from lockgate.engine.runtime.metrics.names import METRICS, MetricScope, metric
from lockgate.engine.simulation import SubtaskReport
from tests.docs.pages import DOCS

IDENTITY = {"key", "chain", "uids", "subtask_index", "parallelism", "finished", "input_capacity"}
NESTED = {"async_io", "keyed_state", "late_records_dropped", "side_output_records"}
NESTED |= {"split_watermarks", "operators"}


def fields(*classes: type) -> set[str]:
    return {field.name for cls in classes for field in dataclasses.fields(cls)}


def named(scope: MetricScope) -> set[str]:
    return {name.field for name in METRICS if name.scope is scope}


def test_every_task_metric_is_a_field_of_subtask_metrics_and_every_field_is_named() -> None:
    assert named(MetricScope.TASK) == fields(SubtaskMetrics) - IDENTITY - NESTED


def test_every_operator_metric_is_a_field_of_its_records_its_async_io_or_a_subtasks_map() -> None:
    counted = fields(OperatorMetrics, AsyncIoMetrics) - {"uid", "subtask_index"}
    by_subtask = {"late_records_dropped", "side_output_records", "split_watermarks"}

    assert named(MetricScope.OPERATOR) == counted | by_subtask


def test_every_job_metric_is_a_field_of_the_job_or_its_checkpoints() -> None:
    where = fields(JobMetrics) | fields(CheckpointMetrics) | fields(CheckpointRecordMetrics)

    assert named(MetricScope.JOB) <= where


def test_prometheus_names_are_unique_and_valid() -> None:
    names = [name.prometheus for name in METRICS]

    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"lockgate_(task|operator|job)_[a-zA-Z]+", name) for name in names)


def test_the_simulation_report_names_its_series_as_the_live_metrics_do() -> None:
    series = {name for name in fields(SubtaskReport) if name.endswith(("_per_second", "_fill"))}

    assert series
    assert series <= named(MetricScope.TASK)


def test_an_unknown_field_is_refused_by_name() -> None:
    with pytest.raises(KeyError, match="no task metric has the field 'speed'"):
        metric(MetricScope.TASK, "speed")


def test_the_metrics_page_lists_every_metric_with_its_unit() -> None:
    page = (DOCS / "reference" / "metrics.md").read_text()

    for name in METRICS:
        row = f"| `{name.field}` | `{name.prometheus}` | {name.kind.value} | {name.unit} |"
        assert row in page, f"docs/reference/metrics.md has no row for {name.prometheus}"
