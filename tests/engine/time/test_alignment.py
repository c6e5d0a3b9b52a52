"""AlignmentGroup: the group's watermark, and who may read on, without an event loop."""

from __future__ import annotations

import math

import pytest

from lockgate.engine.time.alignment import AlignmentGroup


def _group(**members: float | None) -> AlignmentGroup:
    group = AlignmentGroup("g", max_drift=10.0)
    for name, watermark in members.items():
        group.join(name, lambda watermark=watermark: watermark)  # type: ignore[misc]
    return group


def test_the_groups_watermark_is_the_lowest_of_its_members() -> None:
    group = _group(a=5.0, b=30.0)

    assert (group.watermark, group.max_allowed) == (5.0, 15.0)


def test_a_member_more_than_the_drift_ahead_may_not_read() -> None:
    group = _group(a=5.0, b=15.0, c=16.0)

    assert [group.allows(m) for m in "abc"] == [True, True, False]
    assert group.drift("c") == 11.0


def test_a_member_without_a_watermark_yet_holds_every_other_back() -> None:
    group = _group(a=-math.inf, b=0.0)

    assert (group.allows("a"), group.allows("b")) == (True, False)
    assert group.drift("b") is None


def test_idle_members_and_members_that_left_do_not_hold_the_group_back() -> None:
    group = _group(a=None, b=-math.inf, c=50.0)
    group.leave("b")

    assert group.watermark == 50.0
    assert group.allows("a")


def test_a_group_without_members_that_count_holds_nobody_back() -> None:
    assert _group(a=None).watermark == math.inf


def test_a_member_joins_once() -> None:
    group = _group(a=1.0)

    with pytest.raises(ValueError, match="'a' is in watermark alignment group 'g' already"):
        group.join("a", lambda: 2.0)


def test_a_member_that_left_may_read_and_tells_no_drift() -> None:
    group = _group(a=1.0, b=50.0)
    group.leave("b")

    assert (group.allows("b"), group.drift("b")) == (True, None)
