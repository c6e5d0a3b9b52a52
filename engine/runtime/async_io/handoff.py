"""Handoff: how an idle ``async_map`` worker is handed its next record, on asyncio or trio."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

import anyio

from lockgate.engine.runtime.async_io.result_queue import AsyncEntry

__all__ = ["Handoff", "handoff_for_this_loop"]


class Handoff(Protocol):
    """One record for one idle worker: ``hand`` it over once, ``wait`` until it is there.

    A second ``hand`` is ignored, so a worker cancelled with its group takes nothing.
    """

    def hand(self, entry: AsyncEntry) -> None:
        """Give the waiting worker ``entry``, unless it was given one already."""

    async def wait(self) -> AsyncEntry:
        """Wait until an entry is handed over, and return it."""
        ...


class _FutureHandoff:
    # An asyncio future, not an anyio.Event: creating an Event looks up the running async
    # library each time, a cost paid on the loop for every record.
    __slots__ = ("_future",)

    def __init__(self) -> None:
        self._future: asyncio.Future[AsyncEntry] = asyncio.get_running_loop().create_future()

    def hand(self, entry: AsyncEntry) -> None:
        if not self._future.done():
            self._future.set_result(entry)

    async def wait(self) -> AsyncEntry:
        return await self._future


class _EventHandoff:
    __slots__ = ("_entry", "_handed")

    def __init__(self) -> None:
        self._handed = anyio.Event()
        self._entry: AsyncEntry | None = None

    def hand(self, entry: AsyncEntry) -> None:
        if not self._handed.is_set():
            self._entry = entry
            self._handed.set()

    async def wait(self) -> AsyncEntry:
        await self._handed.wait()
        assert self._entry is not None, "set only together with the entry"
        return self._entry


def handoff_for_this_loop() -> Callable[[], Handoff]:
    """Return the handoff for the running event loop: a future on asyncio, an Event on trio."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # not asyncio: trio, through anyio
        return _EventHandoff
    return _FutureHandoff
