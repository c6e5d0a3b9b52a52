"""Service: a modelled remote service for ``async_map``, with its latency and its limits."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

from lockgate.engine.simulation.models.availability import Availability, Outage
from lockgate.engine.simulation.models.distributions import Distribution
from lockgate.engine.simulation.models.model import Model, ModelContext

__all__ = ["Service"]


class Service(Model):
    """An async function for ``async_map`` that answers after ``latency`` seconds.

    ``await service(record)`` returns ``record`` once a draw of ``latency`` has passed on
    the simulation's clock. At most ``concurrency`` calls are served at once, of every
    subtask together, as by a remote service with that many workers; the others wait their
    turn, in order. A call may fail instead, as the service's ``Availability`` decides
    when it starts: during one of ``outages`` (``ServiceUnavailable``, or held until the
    outage ends for a ``"stall"`` outage), over ``rate_limit`` calls per second
    (``RateLimited``), or at the error rate ``errors`` (``ServiceError``). The job sees
    the error from its ``async_map`` function: ``AsyncRetry`` retries it, ``on_failure``
    decides what a record whose calls all failed becomes. The draws come from the
    simulation's seed; ``calls`` counts the calls, ``refused`` those that failed.
    """

    def __init__(
        self,
        latency: Distribution,
        *,
        concurrency: int | None = None,
        errors: float = 0.0,
        outages: Sequence[Outage] = (),
        rate_limit: float | None = None,
        burst: int = 1,
    ) -> None:
        if concurrency is not None and not (isinstance(concurrency, int) and concurrency >= 1):
            raise ValueError(f"Service: concurrency must be 1 or more, or None; got {concurrency}")
        self.latency = latency
        self.concurrency = concurrency
        self.availability = Availability(
            "Service", errors=errors, outages=outages, rate_limit=rate_limit, burst=burst
        )
        self.calls = 0
        self._model = ModelContext("service")
        self._rng: random.Random = self._model.random("calls")
        self._faults: random.Random = self._model.random("errors")
        self._limit: anyio.Semaphore | None = None
        self._sleep: Callable[[float], Awaitable[None]] = self._model.sleep
        self._now: Callable[[], float] = _zero

    @property
    def refused(self) -> int:
        """Calls that failed: in an outage, over the rate limit, or by the error rate."""
        return self.availability.refused

    def bind(self, context: ModelContext) -> None:
        """Draw from ``context``'s seed, with no call counted or waiting yet."""
        super().bind(context)
        self._model = context
        self._rng = context.random("calls")
        self._faults = context.random("errors")
        self._limit = None
        self.calls = 0
        self.availability.name = f"Service '{context.uid}'"
        self.availability.reset()
        self._sleep = context.sleep if context.clock is None else context.clock.sleep
        self._now = _zero if context.clock is None else context.clock.now

    async def __call__(self, record: Any) -> Any:
        """Answer ``record`` after one latency draw (waiting first for a free worker)."""
        self.calls += 1
        if not self.availability.always:
            held = self.availability.admit(self._now(), self._faults)
            if held:
                await self._sleep(held)
        if self.concurrency is None:
            await self._sleep(self.latency.draw(self._rng))
            return record
        if self._limit is None:
            self._limit = anyio.Semaphore(self.concurrency)
        async with self._limit:
            await self._sleep(self.latency.draw(self._rng))
        return record

    def __repr__(self) -> str:
        return f"<Service latency={self.latency!r} concurrency={self.concurrency}>"


def _zero() -> float:
    return 0.0
