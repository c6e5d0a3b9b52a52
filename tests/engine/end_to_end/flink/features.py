"""The lockgate features some scenarios need that are not on main yet (issue 18).

Each feature names the scenarios that need it and says how to tell it has landed. While it
has not, those scenarios are strict xfails; once it has, they run as any test (so a job
written against a different API than the one that landed fails loudly), and
``test_no_scenario_waits_for_a_feature_that_landed`` fails until the feature's entry goes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lockgate.engine import (
    DataStream,
    KeyedStream,
    ProcessContext,
    WatermarkStrategy,
)
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


TIMESTAMPS = Feature(
    "timestamps on records (ctx.timestamp())",
    ("map_forgets_time", "window_of_windows"),
    lambda: hasattr(ProcessContext, "timestamp"),
)
FEATURES = (
    Feature(
        "window joins and co_group (join/co_group().where().equal_to().window().apply())",
        ("window_join", "co_group"),
        lambda: hasattr(DataStream, "join") or hasattr(DataStream, "co_group"),
    ),
    Feature(
        "interval joins (interval_join().between().process())",
        ("interval_join",),
        lambda: hasattr(KeyedStream, "interval_join"),
    ),
    TIMESTAMPS,
    Feature(
        "per-split watermarks (rename the reader hooks splits.py assumes to their API)",
        ("per_split",),
        lambda: hasattr(WatermarkStrategy, "for_generator"),
    ),
)


def missing_for(case: Case, *, also: tuple[Feature, ...] = ()) -> list[Feature]:
    """The features the case needs (with ``also``) that have not landed."""
    return [f for f in FEATURES if (f.needed_by(case) or f in also) and not f.landed()]
