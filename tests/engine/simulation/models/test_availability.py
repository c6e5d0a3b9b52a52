"""Availability: outages, a rate limit and an error rate, checked as each call starts."""

from __future__ import annotations

import random

import pytest

from lockgate.engine.simulation import (
    Availability,
    Outage,
    RateLimited,
    ServiceError,
    ServiceUnavailable,
)


def test_a_call_during_an_outage_is_refused_and_one_after_it_served() -> None:
    service = Availability("store", outages=[Outage(10.0, 5.0)])
    rng = random.Random(1)

    with pytest.raises(ServiceUnavailable, match="store is in an outage from 10 s to 15 s"):
        service.admit(12.0, rng)
    assert (service.admit(9.9, rng), service.admit(15.0, rng), service.refused) == (0, 0, 1)


def test_a_call_during_a_stall_is_held_until_the_outage_ends() -> None:
    service = Availability("store", outages=[Outage(10.0, 5.0, kind="stall")])

    assert service.admit(11.5, random.Random(1)) == pytest.approx(3.5)


def test_calls_over_the_rate_limit_are_refused_until_tokens_come_back() -> None:
    service = Availability("api", rate_limit=10.0, burst=2)
    rng = random.Random(1)

    service.admit(0.0, rng)
    service.admit(0.0, rng)
    with pytest.raises(RateLimited, match="allows 10 calls per second"):
        service.admit(0.05, rng)
    assert service.admit(0.15, rng) == 0.0


def test_the_error_rate_fails_that_share_of_calls() -> None:
    service = Availability("api", errors=0.1)
    rng = random.Random(1)
    failed = 0
    for _ in range(10_000):
        try:
            service.admit(0.0, rng)
        except ServiceError:
            failed += 1

    assert failed == service.refused
    assert failed / 10_000 == pytest.approx(0.1, rel=0.1)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"errors": 1.5}, "errors must be a probability from 0 to 1; got 1.5"),
        ({"rate_limit": 0.0}, "rate_limit must be a finite number of calls per second"),
        ({"burst": 0}, "burst must be a whole number of calls, 1 or more"),
    ],
)
def test_options_that_cannot_be_are_refused(options, message) -> None:
    with pytest.raises(ValueError, match=message):
        Availability("api", **options)


def test_an_outage_needs_a_time_and_a_length() -> None:
    with pytest.raises(ValueError, match="Outage: duration must be finite and more than 0"):
        Outage(1.0, 0.0)
