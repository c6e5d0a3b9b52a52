"""Availability: whether a modelled service serves a call now, refuses it, or holds it.

Outages at given times, a rate limit and an error rate, shared by every subtask calling
the service, as a remote service's are.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from lockgate.engine.simulation.models.service_errors import (
    RateLimited,
    ServiceError,
    ServiceUnavailable,
)

__all__ = ["Availability", "Outage", "OutageKind"]

OutageKind: TypeAlias = Literal["error", "stall"]
"""What a call during an outage meets: an error at once, or a wait until the outage ends."""


@dataclass(frozen=True, slots=True)
class Outage:
    """The service is down from virtual time ``at`` for ``duration`` seconds.

    ``kind="error"`` (the default): a call that starts meanwhile fails at once with
    ``ServiceUnavailable``. ``kind="stall"``: it waits until the outage ends, then is
    served (a connection that hangs). Calls started before the outage are served.
    """

    at: float
    duration: float
    kind: OutageKind = "error"

    def __post_init__(self) -> None:
        if not (self.at >= 0 and math.isfinite(self.at)):
            raise ValueError(f"Outage: at must be a finite time, 0 or more; got {self.at}")
        if not (self.duration > 0 and math.isfinite(self.duration)):
            raise ValueError(
                f"Outage: duration must be finite and more than 0; got {self.duration}"
            )
        if self.kind not in ("error", "stall"):
            raise ValueError(f"Outage: kind must be 'error' or 'stall'; got {self.kind!r}")

    @property
    def end(self) -> float:
        """When the service is back."""
        return self.at + self.duration

    def covers(self, time: float) -> bool:
        """Whether the service is down at ``time``."""
        return self.at <= time < self.end


class Availability:
    """The rules a modelled service applies to each call, checked when the call starts.

    In order: an outage covering the call's start refuses it (``ServiceUnavailable``) or
    holds it until the outage ends; over ``rate_limit`` calls per second (a token bucket
    of ``burst``) it is refused (``RateLimited``); then it fails with probability
    ``errors`` (``ServiceError``). ``admit`` draws from the generator it is given only for
    the error rate, so a seed repeats every refusal.
    """

    def __init__(
        self,
        name: str,
        *,
        errors: float = 0.0,
        outages: Sequence[Outage] = (),
        rate_limit: float | None = None,
        burst: int = 1,
    ) -> None:
        _check(name, errors, rate_limit, burst)
        self.name = name
        self.errors = errors
        self.outages = tuple(sorted(outages, key=lambda outage: outage.at))
        self.rate_limit = rate_limit
        self.burst = burst
        self.refused = 0
        self.always = not self.outages and rate_limit is None and not errors
        """Whether every call is served at once: no outage, no limit, no errors."""
        self._tokens = float(burst)
        self._refilled = 0.0

    def reset(self) -> None:
        """Forget the calls seen: a full bucket, nothing refused (a new simulation run)."""
        self.refused = 0
        self._tokens = float(self.burst)
        self._refilled = 0.0

    def admit(self, now: float, rng: random.Random) -> float:
        """Check a call starting at ``now``; return how long it is held (0: not at all).

        Raises:
            ServiceUnavailable: an outage of kind ``"error"`` covers ``now``.
            RateLimited: the call is over the rate limit.
            ServiceError: the call drew an error.
        """
        held = 0.0
        outage = self._outage_at(now)
        if outage is not None:
            if outage.kind == "error":
                window = f"is in an outage from {outage.at:g} s to {outage.end:g} s"
                self._refuse(ServiceUnavailable, window, now)
            held = outage.end - now
        if self.rate_limit is not None and not self._take_token(now + held):
            self._refuse(RateLimited, f"allows {self.rate_limit:g} calls per second", now)
        if self.errors and rng.random() < self.errors:
            self._refuse(ServiceError, f"failed a call (error rate {self.errors:g})", now)
        return held

    def _outage_at(self, now: float) -> Outage | None:
        return next((outage for outage in self.outages if outage.covers(now)), None)

    def _take_token(self, now: float) -> bool:
        assert self.rate_limit is not None
        elapsed = max(0.0, now - self._refilled)
        self._tokens = min(float(self.burst), self._tokens + elapsed * self.rate_limit)
        self._refilled = max(now, self._refilled)
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True

    def _refuse(self, error: type[ServiceError], what: str, now: float) -> None:
        self.refused += 1
        raise error(f"modelled {self.name} {what}; the call at {now:.3f} s was refused")

    def __repr__(self) -> str:
        return (
            f"<Availability '{self.name}' errors={self.errors} outages={len(self.outages)} "
            f"rate_limit={self.rate_limit} refused={self.refused}>"
        )


def _check(name: str, errors: float, rate_limit: float | None, burst: int) -> None:
    if not 0 <= errors <= 1:
        raise ValueError(f"{name}: errors must be a probability from 0 to 1; got {errors}")
    if rate_limit is not None and not (rate_limit > 0 and math.isfinite(rate_limit)):
        raise ValueError(
            f"{name}: rate_limit must be a finite number of calls per second, or None; "
            f"got {rate_limit}"
        )
    if not (isinstance(burst, int) and burst >= 1):
        raise ValueError(f"{name}: burst must be a whole number of calls, 1 or more; got {burst}")
