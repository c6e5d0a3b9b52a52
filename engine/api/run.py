"""run: start an async entry point on the fastest event loop available."""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable
from typing import TypeVar, TypeVarTuple, Unpack

import anyio

__all__ = ["run"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


def run(main: Callable[[Unpack[Ts]], Awaitable[T]], *args: *Ts) -> T:
    """Run ``main(*args)`` in a new event loop, on uvloop when it is installed.

    ``lockgate.engine.run(env.execute, "job")`` is the synchronous way to run a job; inside a
    service that already has a loop, ``await env.execute("job")`` instead.
    """
    uvloop = importlib.util.find_spec("uvloop") is not None
    return anyio.run(main, *args, backend="asyncio", backend_options={"use_uvloop": uvloop})
