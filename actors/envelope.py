"""Envelope and Reply: how a message and the way to answer it travel together."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio

from lockgate.actors.errors import AskTimeout

__all__ = ["Envelope", "Reply"]

M = TypeVar("M")


class Reply:
    """A one-shot slot for the answer to an ask: set once, read by one waiter."""

    __slots__ = ("_error", "_event", "_value")

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def set(self, value: Any) -> None:
        """Deliver ``value`` to the asker (ignored once a reply was given)."""
        if not self._event.is_set():
            self._value = value
            self._event.set()

    def fail(self, error: BaseException) -> None:
        """Raise ``error`` in the asker (ignored once a reply was given)."""
        if not self._event.is_set():
            self._error = error
            self._event.set()

    async def wait(self, timeout: float | None) -> Any:  # noqa: ASYNC109 (see ActorRef.ask)
        """Return the reply, raise the error given, or raise ``AskTimeout``."""
        with anyio.move_on_after(timeout):
            await self._event.wait()
        if not self._event.is_set():
            raise AskTimeout(f"no reply within {timeout} s")
        if self._error is not None:
            raise self._error
        return self._value


@dataclass(frozen=True, slots=True)
class Envelope(Generic[M]):
    """A message with the reply slot of the ask that sent it, if any.

    Inboxes hold envelopes; ``Actor.next_control()`` returns one. A told message has no
    reply slot; an asked one is answered once, through ``reply``, by the actor's hook.
    """

    message: M
    reply: Reply | None = None
