"""Replay: the arrivals of a recorded trace, at its times, with its keys, then the end."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from lockgate.engine import StreamEnvironment
from lockgate.engine.simulation import ArrivalSource, Constant, Replay, ServiceSink, Simulation


def test_a_trace_is_replayed_from_the_sources_start_at_its_own_spacing() -> None:
    trace = Replay([100.0, 100.5, 102.0])

    assert list(trace.times(random.Random(1))) == [0.0, 0.5, 2.0]


def test_a_start_before_the_first_time_keeps_the_wait_before_it() -> None:
    assert Replay([10.0, 11.0], start=8.0).at == (2.0, 3.0)


def test_a_trace_is_read_from_csv_with_its_keys(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    path.write_text("time,key\n5.0,7\n5.25,user-3\n")

    trace = Replay.from_csv(path)

    assert (trace.at, trace.keys) == ((0.0, 0.25), (7, "user-3"))


@pytest.mark.parametrize(
    "data",
    [
        [{"time": 1.0, "key": "a"}, {"time": 3.0, "key": "b"}],
        {"times": [1.0, 3.0], "keys": ["a", "b"]},
    ],
)
def test_a_trace_is_read_from_json_records_or_columns(tmp_path: Path, data) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(data))

    trace = Replay.from_json(path)

    assert (trace.at, trace.keys) == ((0.0, 2.0), ("a", "b"))


def test_subtasks_share_a_trace_record_by_record() -> None:
    trace = Replay([0.0, 1.0, 2.0, 3.0, 4.0], keys="abcde")

    share = trace.share(2, 1)

    assert (share.at, share.keys) == ((1.0, 3.0), ("b", "d"))


def test_times_out_of_order_are_refused_naming_them() -> None:
    with pytest.raises(ValueError, match="time 2 \\(1\\) comes before time 1 \\(3\\)"):
        Replay([0.0, 3.0, 1.0])


def test_a_replayed_trace_reaches_the_sink_with_its_times_and_keys_then_the_job_ends() -> None:
    trace = Replay([0.0, 0.5, 0.75, 2.0], keys=["a", "b", "a", "c"])
    env = StreamEnvironment()
    seen = []
    (
        env.from_source(ArrivalSource(trace), uid="events")
        .map(lambda arrival: seen.append((arrival.event_time, arrival.key)) or arrival, uid="look")
        .sink_to(ServiceSink(Constant(0.001)), uid="out")
    )

    report = Simulation(env, seed=1, until=60.0).run("replay")

    assert seen == [(0.0, "a"), (0.5, "b"), (0.75, "a"), (2.0, "c")]
    assert report.sink("out").records == 4
    assert report.times[-1] < 3.0  # the input ended with the trace
