"""lockgate.engine.simulation: the real engine on virtual time, to predict backpressure.

``VirtualTimeLoop`` is asyncio's event loop with a virtual clock that jumps to the next
timer whenever every task waits; ``VirtualClock`` is the job's clock reading it.
"""

from lockgate.engine.simulation.clock import VirtualClock
from lockgate.engine.simulation.loop import VirtualTimeLoop

__all__ = [
    "VirtualClock",
    "VirtualTimeLoop",
]
