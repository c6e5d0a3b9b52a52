"""Scenario: a simulation described in TOML: the job by module:attr, its models, faults."""

from __future__ import annotations

from pathlib import Path

import pytest

from lockgate.engine.simulation import (
    ArrivalSource,
    KillAttempt,
    LogNormal,
    Outage,
    Poisson,
    Replay,
    Service,
    ServiceSink,
    SlowStorage,
    ZipfKeys,
)
from lockgate.engine.simulation.scenario import Scenario, ScenarioError

JOB = """
from lockgate.engine import StreamEnvironment

def build(events, store, *, capacity=1):
    env = StreamEnvironment()
    env.from_source(events, uid="events").sink_to(store, uid="store").disable_chaining()
    env.capacity = capacity
    return env
"""


def scenario(tmp_path: Path, text: str) -> Scenario:
    (tmp_path / "scenario_job.py").write_text(JOB)
    path = tmp_path / "scenario.toml"
    path.write_text('[simulation]\njob = "scenario_job:build"\n' + text)
    return Scenario.load(path)


def test_models_are_built_from_their_tables_nested_ones_too(tmp_path) -> None:
    loaded = scenario(
        tmp_path,
        """
[models.events]
kind = "arrival_source"
arrivals = { kind = "poisson", rate = 300.0 }
keys = { kind = "zipf", count = 100 }
tick = 0.01

[models.store]
kind = "service"
latency = { kind = "lognormal", mean = 0.02 }
outages = [{ at = 10.0, duration = 5.0, kind = "stall" }]
""",
    )

    events, store = loaded.models["events"], loaded.models["store"]
    assert isinstance(events, ArrivalSource) and events.arrivals == Poisson(300.0)
    assert events.keys == ZipfKeys(100) and events.tick == 0.01
    assert isinstance(store, Service) and store.latency == LogNormal(0.02)
    assert store.availability.outages == (Outage(10.0, 5.0, "stall"),)


def test_the_job_is_built_with_the_models_and_the_parameters(tmp_path) -> None:
    loaded = scenario(
        tmp_path,
        """
seed = 3
until = 30.0
[parameters]
capacity = 16
[models.events]
kind = "arrival_source"
arrivals = { kind = "constant_rate", rate = 10.0 }
[models.store]
kind = "service_sink"
service = { kind = "constant", seconds = 0.01 }
[[faults]]
kind = "kill_attempt"
at = 12.0
[[faults]]
kind = "slow_storage"
write = { kind = "constant", seconds = 0.1 }
""",
    )

    env = loaded.environment()
    assert env.capacity == 16  # type: ignore[attr-defined]
    assert (loaded.seed, loaded.until) == (3, 30.0)
    assert loaded.faults[0] == KillAttempt(12.0)
    assert isinstance(loaded.faults[1], SlowStorage)
    assert isinstance(loaded.models["store"], ServiceSink)


def test_a_replayed_trace_is_read_beside_the_scenario(tmp_path) -> None:
    (tmp_path / "trace.csv").write_text("time,key\n0.0,a\n1.0,b\n")

    loaded = scenario(
        tmp_path,
        '[models.events]\nkind = "arrival_source"\n'
        'arrivals = { kind = "replay", path = "trace.csv" }\n',
    )

    assert loaded.models["events"].arrivals == Replay([0.0, 1.0], ["a", "b"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[models.x]\nkind = "gamma"\n', "models.x has unknown kind 'gamma'; known: "),
        ('[models.x]\nkind = "poisson"\nrat = 1.0\n', r"models.x: Poisson refused \['rat'\]"),
        ('[models.x]\nkind = "poisson"\nrate = -1.0\n', "rate must be a finite number"),
        ('[[faults]]\nkind = "meteor"\n', "faults\\[0\\] must be a table whose kind is one of"),
        ("[weather]\n", "unknown tables \\['weather'\\]"),
    ],
)
def test_what_cannot_be_is_refused_naming_the_file_and_the_key(tmp_path, text, message) -> None:
    with pytest.raises(ScenarioError, match=message):
        scenario(tmp_path, text)


def test_a_job_that_is_not_module_attr_is_refused(tmp_path) -> None:
    path = tmp_path / "scenario.toml"
    path.write_text('[simulation]\njob = "nothing"\n')

    with pytest.raises(ScenarioError, match="job must be 'module:attr'"):
        Scenario.load(path)
