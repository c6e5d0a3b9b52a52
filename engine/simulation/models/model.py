"""Model and ModelContext: stand-ins for the world, bound to a simulation when it starts."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import anyio

from lockgate.engine.simulation.clock import VirtualClock
from lockgate.engine.simulation.models.arrival import Arrival

__all__ = ["CommitListener", "Model", "ModelContext"]


class CommitListener(Protocol):
    """Where a modelled sink reports what it committed, and when."""

    def committed(self, uid: str, arrivals: Sequence[Arrival], times: Sequence[float]) -> None:
        """``arrivals[i]`` committed at virtual time ``times[i]`` in sink ``uid``."""


@dataclass(frozen=True, slots=True)
class ModelContext:
    """What a model is given when a simulation starts: its operator, the seed, the clock.

    ``random(*names)`` is a generator seeded from the simulation's one seed, the operator's
    uid and ``names``: the same for the same seed, run after run, whatever else the job
    does. ``sleep`` and ``spend`` are on the simulation's virtual clock (outside a
    simulation, ``sleep`` is the event loop's and ``spend`` costs nothing); ``commits``
    hears what modelled sinks commit.
    """

    uid: str
    seed: int = 0
    clock: VirtualClock | None = None
    commits: CommitListener | None = None

    def random(self, *names: object) -> random.Random:
        """A generator of its own for ``names`` within this operator."""
        return random.Random("/".join(str(part) for part in (self.seed, self.uid, *names)))

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` on the simulation's clock."""
        if self.clock is None:
            await anyio.sleep(seconds)
        else:
            await self.clock.sleep(seconds)

    def spend(self, seconds: float) -> None:
        """Let ``seconds`` of virtual time pass now, a CPU cost (nothing outside a simulation)."""
        if self.clock is not None:
            self.clock.spend(seconds)


class Model:
    """A stand-in for the world: a source of arrivals, a sink or a service with its times.

    A ``Simulation`` binds every model of the job before it starts (``bind``), so that all
    randomness comes from the simulation's seed; an unbound model uses seed 0, reports
    nothing, and runs on any clock.
    """

    context: ModelContext | None = None

    def bind(self, context: ModelContext) -> None:
        """Take the context of the simulation about to run."""
        self.context = context

    def context_for(self, uid: str) -> ModelContext:
        """The bound context, or an unbound one for operator ``uid``."""
        return self.context if self.context is not None else ModelContext(uid)
