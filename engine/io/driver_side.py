"""DriverSide: an object whose copy in the driving process is the one of record.

A job's functions, sources and sinks travel to worker processes as copies. Most copies are
independent; a few objects stand for something that exists once, in the driving process:
the results a ``CollectSink`` committed, the records an ``IngressSource`` was sent, whether
a ``FailOnce`` has fired. Such a class derives from ``DriverSide``:

- Under the ``LocalExecutor`` nothing changes: there is one copy, the original.
- A worker process gets a copy without the attributes named in ``driver_only`` and linked
  to the original. A method decorated with ``on_driver`` (async) runs on the original: the
  worker's call sends its arguments to the driving process and returns what the original
  returned there, or raises what it raised. ``tell_driver(name, *args)`` runs a plain
  method on the original without waiting (a fact the driver must learn, in order);
  ``call_on_driver(name, *args)`` runs one and blocks for its result (synchronous code
  that needs an answer). ``workers_gone()`` tells the original when an attempt's workers
  ended.
- Copies made with ``copy`` or ``deepcopy`` are the object itself, as every subtask's copy
  of a function shares one ``FailOnce``.

Arguments and results cross processes by pickle: keep them plain data.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar, Concatenate, ParamSpec, Protocol, TypeVar

__all__ = ["DriverLink", "DriverSide", "on_driver"]

P = ParamSpec("P")
R = TypeVar("R")
D = TypeVar("D", bound="DriverSide")


class DriverLink(Protocol):
    """How a worker's copy reaches its original in the driving process."""

    async def call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run ``method`` on the original; return its result or raise its error."""

    def tell(self, method: str, args: tuple[Any, ...]) -> None:
        """Run ``method`` on the original, without waiting; calls run in the order told."""

    def call_blocking(self, method: str, args: tuple[Any, ...]) -> Any:
        """Run the plain ``method`` on the original, blocking this thread for its result."""


class DriverSide:
    """Base of objects whose one copy of record lives in the driving process (see module)."""

    driver_only: ClassVar[tuple[str, ...]] = ()
    """Attributes a worker's copy does not get: they exist on the original only."""

    _driver_link: DriverLink | None = None

    @property
    def is_driver_copy(self) -> bool:
        """Whether this is the original, in the driving process (always, when local)."""
        return self._driver_link is None

    def worker_state(self) -> dict[str, Any]:
        """The attributes a worker's copy starts with: all but ``driver_only``."""
        hidden = {*self.driver_only, "_driver_link"}
        return {name: value for name, value in vars(self).items() if name not in hidden}

    def tell_driver(self, method: str, *args: Any) -> None:
        """Run ``method(*args)`` on the original; here nothing, when this is the original."""
        if self._driver_link is not None:
            self._driver_link.tell(method, args)

    def call_on_driver(self, method: str, *args: Any) -> Any:
        """Return what the plain ``method(*args)`` returns on the original, wherever called.

        A worker's copy blocks its event loop for the round trip (well under a millisecond
        on one machine): for rare calls that need an answer now, in synchronous code.
        """
        if self._driver_link is None:
            return getattr(self, method)(*args)
        return self._driver_link.call_blocking(method, args)

    async def workers_gone(self) -> None:
        """The worker processes of an attempt ended: release what their copies held here.

        Called on the original, once per attempt that ran in worker processes; by default
        nothing.
        """

    def __copy__(self: D) -> D:
        return self

    def __deepcopy__(self: D, memo: dict[int, Any]) -> D:
        return self


def on_driver(
    method: Callable[Concatenate[D, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[D, P], Coroutine[Any, Any, R]]:
    """Make an async method of a ``DriverSide`` class run on the original, wherever called."""

    @functools.wraps(method)
    async def call(self: D, /, *args: P.args, **kwargs: P.kwargs) -> R:
        link = self._driver_link
        if link is None:
            return await method(self, *args, **kwargs)
        result: R = await link.call(method.__name__, args, dict(kwargs))
        return result

    return call
