"""Credits: a sending end sends within the window its receiving end granted, no further."""

from __future__ import annotations

import pytest

from lockgate.engine.runtime.network.transport.credits import ReceiveCredits, SendCredits


def opened(records: int = 10, size: int = 1000) -> SendCredits:
    credits = SendCredits()
    credits.grant(records, size)
    return credits


def test_nothing_is_admitted_before_the_window_is_granted() -> None:
    assert not SendCredits().admits(1, 1)


def test_frames_within_the_window_are_admitted_and_the_next_is_refused() -> None:
    credits = opened(records=10)
    credits.spend(4, 10)
    credits.spend(4, 10)

    assert credits.admits(2, 10)
    assert not credits.admits(3, 10)
    assert credits.statistics().blocked == 1


def test_the_byte_window_refuses_a_frame_as_the_record_window_does() -> None:
    credits = opened(records=100, size=1000)
    credits.spend(1, 900)

    assert not credits.admits(1, 200)


def test_returned_credits_admit_more() -> None:
    credits = opened(records=10)
    credits.spend(10, 10)

    credits.grant(6, 6)

    assert credits.admits(6, 6)
    assert not credits.admits(7, 6)


def test_a_frame_larger_than_the_window_is_admitted_alone() -> None:
    credits = opened(records=10, size=100)

    assert credits.admits(50, 5000)
    credits.spend(50, 5000)
    assert not credits.admits(1, 1)


def test_statistics_show_the_most_in_flight() -> None:
    credits = opened(records=10)
    credits.spend(8, 80)
    credits.grant(8, 80)
    credits.spend(3, 30)

    stats = credits.statistics()

    assert (stats.window_records, stats.granted_records) == (10, 18)
    assert (stats.in_flight_records, stats.max_in_flight_records) == (3, 8)


def test_a_receiving_end_refuses_a_frame_beyond_its_window() -> None:
    credits = ReceiveCredits(10, 1000)

    assert credits.arrives(8, 100)
    assert not credits.arrives(3, 100)


def test_a_receiving_end_returns_what_was_consumed_and_admits_it_again() -> None:
    credits = ReceiveCredits(10, 1000)
    credits.arrives(10, 100)
    credits.consumed(4, 40)

    assert credits.take_return() == (4, 40)
    assert credits.take_return() == (0, 0)
    assert credits.arrives(4, 40)


def test_a_receiving_end_admits_an_oversized_frame_when_nothing_is_outstanding() -> None:
    credits = ReceiveCredits(10, 100)

    assert credits.arrives(50, 5000)
    assert credits.statistics().max_in_flight_records == 50


def test_a_window_needs_a_record_and_a_byte() -> None:
    with pytest.raises(ValueError, match="at least 1 record and 1 byte"):
        ReceiveCredits(0, 100)
