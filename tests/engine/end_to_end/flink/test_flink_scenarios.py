"""lockgate against Apache Flink: each scenario's outputs, exactly as Flink gave them.

The scenarios (scenarios/*.json, README.md beside this file) run here in lockgate and in
Flink 2.3 by scripts/flink_reference/generate.py, which stored Flink's outputs beside them.
Watermarks advance after every record in both engines, so every record's lateness, and the
watermark each output comes under, is the same in both. A scenario whose lockgate API is not
on main yet is a strict xfail naming the feature (features.py); once the feature lands it
runs as any test, and the feature's entry must go.
"""

from __future__ import annotations

import json

import pytest

from tests.engine.end_to_end.flink import scenarios
from tests.engine.end_to_end.flink.features import FEATURES, missing_for
from tests.engine.end_to_end.flink.jobs import run_in_lockgate
from tests.engine.end_to_end.flink.scenarios import Case, comparable


def params() -> list[object]:
    """Every case, a strict xfail naming the features it needs that have not landed."""
    marked = []
    for case in scenarios.cases():
        missing = missing_for(case)
        reason = f"needs {' and '.join(f.name for f in missing)} (issue 18)"
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if missing else []
        marked.append(pytest.param(case, id=case.name, marks=marks))
    return marked


@pytest.mark.parametrize("case", params())
async def test_lockgate_emits_what_flink_emits(case: Case) -> None:
    compare = case.job["compare"]

    outputs = await run_in_lockgate(case.job)

    assert comparable(outputs, compare) == comparable(case.expected, compare)


@pytest.mark.parametrize("case", params())
async def test_outputs_carry_the_timestamps_flink_gives_them(case: Case) -> None:
    compare = case.job["compare"]

    outputs = await run_in_lockgate(case.job, timestamps=True)

    expected = comparable(case.expected, compare, timestamps=True)
    assert comparable(outputs, compare, timestamps=True) == expected


def test_every_scenario_has_flinks_outputs_and_every_fixture_a_scenario() -> None:
    suffix = scenarios.FIXTURE_SUFFIX
    fixtures = {path.name.removesuffix(suffix) for path in scenarios.FOLDER.glob(f"*{suffix}")}

    assert fixtures == set(scenarios.descriptions())


def test_every_fixture_was_computed_from_its_scenario_as_it_is_now() -> None:
    stale = [
        name
        for name in scenarios.descriptions()
        if json.loads(scenarios.fixture_path(name).read_text())["scenario_sha256"]
        != scenarios.sha256(name)
    ]

    assert stale == [], "run scripts/flink_reference/generate.py for these (see README.md)"


def test_no_scenario_waits_for_a_feature_that_landed() -> None:
    landed = [feature.name for feature in FEATURES if feature.landed()]

    assert landed == [], "remove these from features.py: their scenarios now run as tests"
