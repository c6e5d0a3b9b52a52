"""Doorbell: wakes the one task that reads several mailboxes."""

from __future__ import annotations

import anyio

__all__ = ["Doorbell"]


class Doorbell:
    """Wakes a task waiting on several mailboxes when any of them changes.

    A ring is never lost: a ring that comes while nobody waits makes the next ``wait`` return
    at once. Wake-ups may be spurious, so the waiter polls its mailboxes again after each one.
    """

    __slots__ = ("_event", "_rung")

    def __init__(self) -> None:
        self._rung = False
        self._event: anyio.Event | None = None

    def ring(self) -> None:
        """Mark that something changed and wake the waiter, if there is one."""
        self._rung = True
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        """Return once the doorbell has rung since the previous wait returned."""
        if not self._rung:
            self._event = anyio.Event()
            try:
                await self._event.wait()
            finally:
                self._event = None
        self._rung = False

    def __repr__(self) -> str:
        return f"<Doorbell rung={self._rung} waiting={self._event is not None}>"
