"""CoordinatorSlot: the checkpoint coordinator of the attempt that runs, for clients to ask."""

from __future__ import annotations

from typing import Any

import anyio

from lockgate.actors import ActorRef, ActorStopped
from lockgate.engine.errors import JobError

__all__ = ["CoordinatorSlot"]


class CoordinatorSlot:
    """Holds the running attempt's coordinator; ``ask`` reaches it, or the next attempt's.

    Between attempts the slot is empty (an attempt failing, a restart delay, the next
    attempt restoring or looking up its splits): a request waits for the next coordinator.
    A coordinator that stopped before it took a request (its attempt ended) is waited out,
    and the request goes to the next one. Invariant: every change of the slot sets the event
    waiters wait on and puts a new one in its place, so no waiter is ever left on an event
    nothing will set; once the job ended (``close``), waiters raise ``JobError``.
    """

    def __init__(self, job_name: str) -> None:
        self._job_name = job_name
        self._coordinator: ActorRef[Any] | None = None
        self._changed = anyio.Event()
        self._closed = False

    def fill(self, coordinator: ActorRef[Any] | None) -> None:
        """The attempt's coordinator (``None`` once the attempt ended)."""
        self._coordinator = coordinator
        self._changed.set()
        self._changed = anyio.Event()

    def close(self) -> None:
        """The job ended: no coordinator will come."""
        self._closed = True
        self.fill(None)

    async def ask(self, message: Any) -> Any:
        """Ask the running coordinator ``message``, waiting for one; return its answer.

        Raises:
            JobError: the job ended before a coordinator took the request.
        """
        while True:
            coordinator = await self._running()
            try:
                return await coordinator.ask_control(message)
            except ActorStopped:  # its attempt ended before it took the request
                continue

    async def _running(self) -> ActorRef[Any]:
        while (coordinator := self._coordinator) is None or not coordinator.is_alive:
            if self._closed:
                raise JobError(f"job '{self._job_name}' has ended; no checkpoint can be taken")
            await self._changed.wait()
        return coordinator

    def __repr__(self) -> str:
        state = "closed" if self._closed else repr(self._coordinator)
        return f"<CoordinatorSlot {self._job_name!r} {state}>"
