"""Wakeup: wakes every task that waits on it, so that each checks its condition again."""

from __future__ import annotations

from collections.abc import Iterable

import anyio

__all__ = ["Wakeup"]


class Wakeup:
    """Wakes every task waiting on it at the next ``notify``; a woken task checks again.

    The condition itself lives with its owner: check it, and wait only while it does not
    hold (no step between the check and ``wait`` lets another task run, so no notify is
    missed). Each waiter waits on an event of its own, made when it starts waiting: a
    ``Wakeup`` may be made outside any event loop and used in several in turn.
    """

    def __init__(self) -> None:
        self._events: list[anyio.Event] = []

    async def wait(self) -> None:
        """Wait for the next ``notify``."""
        await wait_any((self,))

    def notify(self) -> None:
        """Wake every task waiting now."""
        events, self._events = self._events, []
        for event in events:
            event.set()

    def _add(self, event: anyio.Event) -> None:
        self._events.append(event)

    def _discard(self, event: anyio.Event) -> None:
        if event in self._events:
            self._events.remove(event)

    def __repr__(self) -> str:
        return f"<Wakeup waiting={len(self._events)}>"


async def wait_any(wakeups: Iterable[Wakeup]) -> None:
    """Wait for the next ``notify`` of any of ``wakeups``."""
    event = anyio.Event()
    wakeups = list(wakeups)
    for wakeup in wakeups:
        wakeup._add(event)
    try:
        await event.wait()
    finally:
        for wakeup in wakeups:
            wakeup._discard(event)
