"""lockgate against Apache Flink: each scenario's outputs, exactly as Flink gave them.

The scenarios (scenarios/*.json, README.md beside this file) run here in lockgate and in
Flink 2.3 by scripts/flink_reference/generate.py, which stored Flink's outputs beside them.
Watermarks advance after every record in both engines, so every record's lateness, and the
watermark each output comes under, is the same in both. A scenario whose lockgate API is not
on main yet is a strict xfail naming the feature: when the feature lands the test passes, the
mark fails the suite, and must go.
"""

from __future__ import annotations

import json

import pytest

from tests.engine.end_to_end.flink import scenarios
from tests.engine.end_to_end.flink.jobs import run_in_lockgate
from tests.engine.end_to_end.flink.scenarios import Case, comparable

WINDOW_FUNCTIONS = "reduce(fn, window_function) and aggregate(agg, window_function)"
FEATURES = {  # scenario name prefix -> the lockgate feature it needs
    "aggregate_window_function": WINDOW_FUNCTIONS,
    "matrix_count_window_sliding": "count_window(size, slide)",
    "custom_trigger": "custom Triggers (TriggerResult, TriggerContext)",
    "evictor": "evictors (CountEvictor, TimeEvictor, DeltaEvictor)",
    "window_join": "window joins (join().where().equal_to().window().apply())",
    "co_group": "co_group().where().equal_to().window().apply()",
    "interval_join": "interval joins (interval_join().between().process())",
    "map_forgets_time": "timestamps on records",
    "window_of_windows": "timestamps on records",
    "per_split": "per-split watermarks (and the SourceReader hooks splits.py assumes)",
}


def needs(case: Case) -> list[str]:
    """The lockgate features, not on main yet, that the case's job uses."""
    found = [feature for prefix, feature in FEATURES.items() if case.scenario.startswith(prefix)]
    if case.variant in ("reduce+process", "aggregate+process") and WINDOW_FUNCTIONS not in found:
        found.append(WINDOW_FUNCTIONS)
    return found


def params(*, also: str | None = None) -> list[object]:
    """Every case, a strict xfail naming what it needs (and ``also``, needed by every case)."""
    marked = []
    for case in scenarios.cases():
        missing = list(dict.fromkeys(needs(case) + ([also] if also else [])))
        marks = (
            [pytest.mark.xfail(strict=True, reason=f"needs {' and '.join(missing)} (issue 18)")]
            if missing
            else []
        )
        marked.append(pytest.param(case, id=case.name, marks=marks))
    return marked


@pytest.mark.parametrize("case", params())
async def test_lockgate_emits_what_flink_emits(case: Case) -> None:
    compare = case.job["compare"]

    outputs = await run_in_lockgate(case.job)

    assert comparable(outputs, compare) == comparable(case.expected, compare)


@pytest.mark.parametrize("case", params(also="timestamps on records"))
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
