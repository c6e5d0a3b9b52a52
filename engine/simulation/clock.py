"""VirtualClock: the job's clock in a simulation, reading the loop's virtual time."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["VirtualClock"]


class VirtualClock:
    """A ``Clock`` on virtual time: ``now()`` is the simulation loop's time.

    ``sleep`` waits on the loop's timers, which is where virtual time jumps to when nothing
    else can run; ``spend`` lets virtual time pass at once, as a modelled CPU cost does (the
    running callback holds the loop meanwhile, as real CPU work would). Time never goes back.
    """

    __slots__ = ("now", "sleep", "spend")

    now: Callable[[], float]
    """The virtual time, in seconds since the simulation started."""
    sleep: Callable[[float], Coroutine[Any, Any, None]]
    """Wait until virtual time has advanced by the seconds given."""
    spend: Callable[[float], None]
    """Let the seconds given of virtual time pass now: a CPU cost of the code running."""

    def __init__(
        self,
        time: Callable[[], float],
        sleep: Callable[[float], Coroutine[Any, Any, None]],
        spend: Callable[[float], None],
    ) -> None:
        # The loop's own functions, not methods calling them: the engine reads the clock
        # for every batch and waits on it for every modelled call.
        self.now = time
        self.sleep = sleep
        self.spend = spend

    def __repr__(self) -> str:
        return f"<VirtualClock now={self.now():.6f}>"
