"""The lockgate features some scenarios need that are not on main yet (issue 18).

Each feature names the scenarios that need it and says how to tell it has landed. While it
has not, those scenarios are strict xfails; once it has, they run as any test (so a job
written against a different API than the one that landed fails loudly), and
``test_no_scenario_waits_for_a_feature_that_landed`` fails until the feature's entry goes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tests.engine.end_to_end.flink.scenarios import Case


@dataclass(frozen=True)
class Feature:
    """A missing feature: what it is, which scenarios need it, and whether it landed."""

    name: str
    prefixes: tuple[str, ...]
    landed: Callable[[], bool]

    def needed_by(self, case: Case) -> bool:
        """Whether the case's job uses the feature."""
        return case.scenario.startswith(self.prefixes)


FEATURES: tuple[Feature, ...] = ()


def missing_for(case: Case) -> list[Feature]:
    """The features the case needs that have not landed."""
    return [f for f in FEATURES if f.needed_by(case) and not f.landed()]
