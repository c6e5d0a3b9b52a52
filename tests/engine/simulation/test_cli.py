"""lockgate simulate: a scenario file run on virtual time, its report printed and written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lockgate.engine.api.cli import main
from lockgate.engine.simulation.cli import simulate_main

EXAMPLE = Path(__file__).parents[3] / "examples" / "simulated_enrichment.toml"


def test_the_shipped_example_runs_and_writes_its_html_and_json(tmp_path, capsys) -> None:
    html, series = tmp_path / "report.html", tmp_path / "series.json"

    status = main(["simulate", str(EXAMPLE), "--html", str(html), "--json", str(series)])

    out = capsys.readouterr().out
    assert status == 0
    assert out.startswith("simulation of 'simulated_enrichment', seed 7: 120 virtual seconds")
    data = json.loads(series.read_text())
    assert [fault["kind"] for fault in data["faults"]] == ["outage", "kill attempt"]
    assert data["sinks"][0]["uid"] == "store"
    assert html.read_text().count("plotly.js v") == 1


def test_seed_and_until_override_the_scenarios(tmp_path) -> None:
    series = tmp_path / "series.json"

    assert simulate_main([str(EXAMPLE), "--seed", "3", "--until", "5", "--json", str(series)]) == 0

    data = json.loads(series.read_text())
    assert (data["seed"], data["until"], data["faults"][0]["struck_at"]) == (3, 5.0, None)


def test_a_scenario_that_cannot_be_read_is_a_usage_error_naming_it(tmp_path, capsys) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[simulation]\njob = 'nowhere_at_all:build'\n")

    assert simulate_main([str(broken)]) == 2
    assert "cannot import 'nowhere_at_all'" in capsys.readouterr().err


def test_a_simulated_job_that_fails_exits_with_one(tmp_path, capsys) -> None:
    (tmp_path / "failing_job.py").write_text(
        "from lockgate.engine import StreamEnvironment\n"
        "def build(events, store):\n"
        "    env = StreamEnvironment()\n"
        "    env.from_source(events, uid='events').map(lambda a: 1 / 0, uid='broken')"
        ".sink_to(store, uid='store')\n"
        "    return env\n"
    )
    scenario = tmp_path / "failing.toml"
    scenario.write_text(
        "[simulation]\njob = 'failing_job:build'\nuntil = 5.0\n"
        "[models.events]\nkind = 'arrival_source'\n"
        "arrivals = {kind = 'constant_rate', rate = 10.0}\n"
        "[models.store]\nkind = 'service_sink'\nservice = {kind = 'constant', seconds = 0.001}\n"
    )

    assert simulate_main([str(scenario)]) == 1
    assert "the simulated job failed: operator 'broken'" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [[], ["--html"]])
def test_missing_arguments_are_a_usage_error(argv) -> None:
    assert simulate_main(argv) == 2
