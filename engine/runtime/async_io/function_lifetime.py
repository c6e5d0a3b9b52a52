"""FunctionLifetime: an ``async_map``'s ``AsyncFunction`` opened before its calls, closed after."""

from __future__ import annotations

import inspect
from typing import Any

from lockgate.engine.functions.async_function import AsyncFunction
from lockgate.engine.functions.process import RuntimeContext

__all__ = ["FunctionLifetime"]


class FunctionLifetime:
    """Awaits an ``AsyncFunction``'s ``open`` and ``close``; does nothing for other functions.

    Invariant: ``close`` reaches the function once, and only after an ``open`` that
    returned. A function that is not an ``AsyncFunction`` is only ever called: an ``open``
    method of its own may mean something else, so it is never called with a context.
    """

    __slots__ = ("_function", "_opened")

    def __init__(self, function: Any) -> None:
        self._function = function if isinstance(function, AsyncFunction) else None
        self._opened = False

    async def open(self, context: RuntimeContext) -> None:
        """Await the function's ``open(context)``."""
        if self._function is not None:
            await _settled(self._function.open(context))
            self._opened = True

    async def close(self) -> None:
        """Await the function's ``close()`` if ``open`` returned; later calls do nothing."""
        if self._opened:
            self._opened = False
            assert self._function is not None
            await _settled(self._function.close())


async def _settled(result: Any) -> None:
    # AsyncFunction's hooks are coroutines; a plain def override returns None, not awaited.
    if inspect.isawaitable(result):
        await result
