"""Recorder: commits counted in the interval their time falls in, latency and lag apart."""

from __future__ import annotations

import pytest

from lockgate.engine import JobMetrics
from lockgate.engine.runtime.metrics import CheckpointMetrics
from lockgate.engine.simulation import Arrival
from lockgate.engine.simulation.recorder import Recorder


def test_a_commit_belongs_to_the_interval_that_ends_at_or_after_it() -> None:
    recorder = Recorder(every=1.0)
    arrivals = [Arrival(seq, None, 0.0, 0.0) for seq in range(3)]

    recorder.committed("out", arrivals, [0.5, 1.0, 1.25])

    intervals = recorder.commits["out"]
    assert {index: interval.records for index, interval in intervals.items()} == {0: 2, 1: 1}


def test_latency_runs_from_admission_and_lag_from_the_intended_arrival() -> None:
    recorder = Recorder(every=1.0)

    recorder.committed("out", [Arrival(0, None, event_time=1.0, admitted_at=3.0)], [3.5])

    (interval,) = recorder.commits["out"].values()
    assert interval.latency.mean == pytest.approx(0.5)
    assert interval.lag.mean == pytest.approx(2.5)


def test_a_sample_keeps_each_subtask_under_its_chain_and_index() -> None:
    recorder = Recorder(every=1.0)

    recorder.sample(1.0, JobMetrics("job", 0, 1.0, 5.0, [], CheckpointMetrics()))

    assert [(s.time, s.subtasks) for s in recorder.samples] == [(1.0, {})]
