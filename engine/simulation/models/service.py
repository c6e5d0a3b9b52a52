"""Service: a modelled remote service for ``async_map``, with its latency and its limits."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from lockgate.engine.simulation.models.distributions import Distribution
from lockgate.engine.simulation.models.model import Model, ModelContext

__all__ = ["Service"]


class Service(Model):
    """An async function for ``async_map`` that answers after ``latency`` seconds.

    ``await service(record)`` returns ``record`` once a draw of ``latency`` has passed on
    the simulation's clock. At most ``concurrency`` calls are served at once, of every
    subtask together, as by a remote service with that many workers; the others wait their
    turn, in order. The draws come from the simulation's seed; ``calls`` counts them.
    """

    def __init__(self, latency: Distribution, *, concurrency: int | None = None) -> None:
        if concurrency is not None and not (isinstance(concurrency, int) and concurrency >= 1):
            raise ValueError(f"Service: concurrency must be 1 or more, or None; got {concurrency}")
        self.latency = latency
        self.concurrency = concurrency
        self.calls = 0
        self._model = ModelContext("service")
        self._rng: random.Random = self._model.random("calls")
        self._limit: anyio.Semaphore | None = None
        self._sleep: Callable[[float], Awaitable[None]] = self._model.sleep

    def bind(self, context: ModelContext) -> None:
        """Draw from ``context``'s seed, with no call counted or waiting yet."""
        super().bind(context)
        self._model = context
        self._rng = context.random("calls")
        self._limit = None
        self.calls = 0
        self._sleep = context.sleep if context.clock is None else context.clock.sleep

    async def __call__(self, record: Any) -> Any:
        """Answer ``record`` after one latency draw (waiting first for a free worker)."""
        self.calls += 1
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
