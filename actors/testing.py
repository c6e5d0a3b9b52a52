"""Probe: an actor for tests that records what it receives."""

from __future__ import annotations

from typing import Any

import anyio

from lockgate.actors.actor import Actor

__all__ = ["Probe"]


class Probe(Actor[Any]):
    """An actor that records every data and control message, for tests of other actors.

    ``expect_message`` returns messages in arrival order, waiting for the next one;
    ``expect_no_message`` asserts that nothing arrived that was not already expected.
    """

    def __init__(self) -> None:
        self.received: list[Any] = []
        self._taken = 0
        self._arrived = anyio.Event()

    async def on_receive(self, message: Any) -> Any:
        """Record a data message and answer an ask with it."""
        self._record(message)
        return message

    async def on_control(self, message: Any) -> Any:
        """Record a control message and answer an ask with it."""
        self._record(message)
        return message

    async def expect_message(self, *, timeout: float = 5.0) -> Any:  # noqa: ASYNC109
        """Return the next message not yet expected, waiting up to ``timeout`` seconds."""
        with anyio.fail_after(timeout):
            while self._taken >= len(self.received):
                await self._arrived.wait()
        self._taken += 1
        return self.received[self._taken - 1]

    def expect_no_message(self) -> None:
        """Fail if a message arrived that no ``expect_message`` has returned."""
        unexpected = self.received[self._taken :]
        assert not unexpected, f"probe '{self.name}' got unexpected messages {unexpected!r}"

    def _record(self, message: Any) -> None:
        self.received.append(message)
        self._arrived.set()
        self._arrived = anyio.Event()
