from __future__ import annotations

from tests.examples.test_examples import load


async def test_sessions_match_a_plain_loop_and_only_the_far_late_clicks_are_set_aside() -> None:
    example = load("inactive_sessions")

    sessions, late = await example.find_sessions(users=20, clicks=3_000)

    clicks = example.clickstream(20, 3_000)
    replayed = clicks[-5:]  # clickstream() ends with 5 clicks at event time 0.5
    assert late == sorted(replayed)
    assert sessions == example.sessions_of(clicks[:-5])
    assert len(sessions) > 100
