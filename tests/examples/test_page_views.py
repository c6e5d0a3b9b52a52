from __future__ import annotations

from collections import Counter

from tests.examples.test_examples import load


async def test_window_counts_match_a_plain_count_and_only_the_offline_views_are_late() -> None:
    example = load("page_views")
    views = example.page_views(6_000, offline=4)

    per_minute, last_five, late = await example.count_views(views)

    on_time, offline = views[:-4], views[-4:]
    minutes = Counter((page, time - time % 60.0) for page, time in on_time)
    assert per_minute == sorted((page, start, n) for (page, start), n in minutes.items())
    fives: Counter[tuple[str, float]] = Counter()
    for page, time in on_time:  # no lateness allowed: the offline views are dropped
        last_start = time - time % 60.0
        for start in (last_start - 60.0 * k for k in range(5)):
            fives[(page, start)] += 1
    assert last_five == sorted((page, start, n) for (page, start), n in fives.items())
    assert late == sorted(offline)
