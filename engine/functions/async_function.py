"""AsyncFunction: an ``async_map`` function with a lifetime (Flink's ``RichAsyncFunction``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Generic, TypeVar

from lockgate.engine.functions.process import RuntimeContext

__all__ = ["AsyncFunction"]

IN = TypeVar("IN")
OUT = TypeVar("OUT")


class AsyncFunction(ABC, Generic[IN, OUT]):
    """A function for ``async_map`` that opens what its calls use, and closes it after them.

    Subclass it and define ``async def __call__(self, record)``; override ``open(context)``
    to create a client session, a connection pool or a model once per subtask, and
    ``close()`` to release it. Every subtask runs its own deep copy of the function, made
    before ``open`` (so create clients in ``open``, never in ``__init__``), and every
    attempt of the job a new one.

    Invariants: ``open`` is awaited once per subtask and attempt, before that subtask's
    first call; ``close`` is awaited once after its last call has ended, whether the job
    finished, failed or was cancelled, if and only if ``open`` returned (one that raised
    fails the attempt with an ``OperatorError``, and its function is not closed). Both are
    coroutines, since what they open and close mostly is async (an ``aiohttp`` session,
    an ``asyncpg`` pool); an override with a plain ``def`` works too. They run on the
    job's event loop, asyncio or trio. A ``close`` of a cancelled job has a few seconds
    (the subtask's grace to stop) before it is cancelled too.
    """

    async def open(self, context: RuntimeContext) -> None:
        """Prepare this subtask's calls; ``context`` says which subtask it is (nothing here)."""

    @abstractmethod
    async def __call__(self, record: IN) -> OUT:
        """Return the result for ``record``; called up to ``capacity`` times at once."""

    async def close(self) -> None:
        """Release what ``open`` acquired (nothing here)."""
