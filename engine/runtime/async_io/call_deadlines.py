"""CallDeadlines: one watchdog task that times out an operator's calls on the job's clock."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import anyio

from lockgate.engine.time.clock import Clock

__all__ = ["CallDeadline", "CallDeadlines"]


@dataclass(slots=True, eq=False)
class CallDeadline:
    """The deadline of one call: its cancel scope is cancelled when the deadline passes."""

    at: float
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: bool = False

    @property
    def expired(self) -> bool:
        """Whether the call was cancelled because its deadline passed."""
        return self.scope.cancelled_caught


class CallDeadlines:
    """Times out calls with a single task sleeping on the job's clock, not a timer per call.

    Every call gets the same timeout and starts no earlier than the one before, so deadlines
    arrive in increasing order and a FIFO holds them sorted. The watchdog sleeps until the
    first deadline (``clock.sleep``: a ``ManualClock`` drives it in tests) and cancels every
    call whose deadline has passed. Finished calls are dropped from the front as new ones
    come, so the FIFO holds about as many deadlines as calls in flight.
    """

    def __init__(self, clock: Clock, timeout: float) -> None:
        self.clock = clock
        self.timeout = timeout
        self._deadlines: deque[CallDeadline] = deque()
        self._armed: anyio.Event | None = None

    def start(self) -> CallDeadline:
        """Begin timing one call; run it inside ``deadline.scope`` and mark ``done`` after."""
        deadlines = self._deadlines
        while deadlines and deadlines[0].done:
            deadlines.popleft()
        deadline = CallDeadline(self.clock.now() + self.timeout)
        deadlines.append(deadline)
        if self._armed is not None:
            self._armed.set()
        return deadline

    async def run(self) -> None:
        """Cancel calls as their deadlines pass, forever (run it in the subtask's task group)."""
        deadlines, clock = self._deadlines, self.clock
        while True:
            if not deadlines:
                self._armed = anyio.Event()
                await self._armed.wait()
                self._armed = None
                continue
            first = deadlines[0]
            wait = first.at - clock.now()
            if wait > 0:
                await clock.sleep(wait)
                continue
            deadlines.popleft()
            if not first.done:
                first.scope.cancel()

    def __len__(self) -> int:
        """Deadlines held: calls in flight, and finished ones not yet dropped."""
        return len(self._deadlines)
