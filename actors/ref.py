"""ActorRef: the only way to reach an actor."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from lockgate.actors.envelope import Envelope, Reply
from lockgate.actors.errors import ActorStopped, MailboxClosed
from lockgate.actors.mailbox import Mailbox
from lockgate.actors.messages import StopActor

__all__ = ["ActorRef"]

M = TypeVar("M")


class ActorRef(Generic[M]):
    """An address of one actor: tell it, ask it, or stop it.

    ``tell`` waits while the actor's data inbox is full (that is backpressure);
    ``tell_nowait`` raises ``MailboxFull`` instead. Control messages go to a separate inbox
    that a full data inbox never blocks. Sending to a stopped actor raises ``ActorStopped``.
    """

    __slots__ = ("_control", "_inbox", "name")

    def __init__(
        self, name: str, inbox: Mailbox[Envelope[M]], control: Mailbox[Envelope[Any]]
    ) -> None:
        self.name = name
        self._inbox = inbox
        self._control = control

    @property
    def is_alive(self) -> bool:
        """Whether the actor still accepts messages."""
        return not self._inbox.closed

    async def tell(self, message: M) -> None:
        """Send a data message, waiting while the inbox is full."""
        await self._send_data(Envelope(message))

    def tell_nowait(self, message: M) -> None:
        """Send a data message now, or raise ``MailboxFull``."""
        self._deliver(self._inbox, Envelope(message))

    def tell_control(self, message: Any) -> None:
        """Send a control message; it overtakes every queued data message."""
        self._deliver(self._control, Envelope(message))

    # A timeout of its own (ASYNC109): AskTimeout is this API's contract, so callers need not
    # tell a missing reply from any other cancellation.
    async def ask(self, message: M, *, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        """Send a data message and return the actor's answer."""
        reply = Reply()
        await self._send_data(Envelope(message, reply))
        return await reply.wait(timeout)

    async def ask_control(self, message: Any, *, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        """Send a control message and return the actor's answer."""
        reply = Reply()
        self._deliver(self._control, Envelope(message, reply))
        return await reply.wait(timeout)

    def stop(self) -> None:
        """Ask the actor to stop after the message in hand (ignored if it already stopped)."""
        if self.is_alive:
            self.tell_control(StopActor())

    def __repr__(self) -> str:
        state = "alive" if self.is_alive else "stopped"
        return f"<ActorRef {self.name!r} {state}>"

    async def _send_data(self, envelope: Envelope[M]) -> None:
        try:
            await self._inbox.send(envelope)
        except MailboxClosed:
            raise self._stopped() from None

    def _deliver(self, mailbox: Mailbox[Envelope[Any]], envelope: Envelope[Any]) -> None:
        try:
            mailbox.send_nowait(envelope)
        except MailboxClosed:
            raise self._stopped() from None

    def _stopped(self) -> ActorStopped:
        return ActorStopped(f"actor '{self.name}' has stopped; it receives nothing more")
