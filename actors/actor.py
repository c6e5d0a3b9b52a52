"""Actor: one task that owns its state and handles its messages one at a time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from lockgate.actors.doorbell import Doorbell
from lockgate.actors.envelope import Envelope
from lockgate.actors.errors import ActorStopped, EndOfMailbox, MailboxEmpty
from lockgate.actors.mailbox import Mailbox
from lockgate.actors.messages import StopActor

if TYPE_CHECKING:
    from lockgate.actors.ref import ActorRef

__all__ = ["Actor", "ActorContext"]

M = TypeVar("M")


@dataclass(slots=True)
class ActorContext(Generic[M]):
    """What the system gives an actor when it spawns it: its name, ref and inboxes.

    The inboxes share one doorbell, which rings whenever either receives a message.
    """

    name: str
    ref: ActorRef[M]
    inbox: Mailbox[Envelope[M]]
    control: Mailbox[Envelope[Any]]
    doorbell: Doorbell


class Actor(Generic[M]):
    """Base class of actors: override ``on_receive`` (and ``on_control`` for control messages).

    An actor has two inboxes: a bounded data inbox (``tell`` waits while it is full) and a
    control inbox that data can never block, read first whenever both hold messages. A message
    is handled to completion before the next one is taken. The value ``on_receive`` or
    ``on_control`` returns answers an ``ask``. An exception escaping any hook crashes the actor
    and fails its ``ActorSystem``. Subclasses with a loop of their own override ``run``.
    """

    inbox_capacity: ClassVar[int] = 1024
    control_capacity: ClassVar[int] = 256

    context: ActorContext[M]

    @property
    def name(self) -> str:
        """The name the actor was spawned with."""
        return self.context.name

    async def on_start(self) -> None:
        """Run once before the first message."""

    async def on_receive(self, message: M) -> Any:
        """Handle one data message; the value returned answers an ask."""
        raise NotImplementedError(f"actor '{self.name}' does not handle data messages")

    async def on_control(self, message: Any) -> Any:
        """Handle one control message other than ``StopActor``."""
        raise NotImplementedError(f"actor '{self.name}' got unknown control {message!r}")

    async def on_stop(self) -> None:
        """Run once after the last message, also after a crash or cancellation."""

    async def run(self) -> None:
        """Handle messages, control first, until stopped or the data inbox ends."""
        while True:
            envelope = self.next_control()
            if envelope is not None:
                if isinstance(envelope.message, StopActor):
                    _answer(envelope, None)
                    return
                await self._handle(envelope, self.on_control)
                continue
            try:
                data = self.context.inbox.receive_nowait()
            except MailboxEmpty:
                await self.context.doorbell.wait()
                continue
            except EndOfMailbox:
                return
            await self._handle(data, self.on_receive)

    async def _handle(self, envelope: Envelope[Any], hook: Callable[[Any], Awaitable[Any]]) -> None:
        """Answer the envelope's ask with what ``hook`` returns or raises.

        A hook that is cancelled answers ``ActorStopped``: an asker outside the system must
        not wait for an answer that will never come.
        """
        try:
            value = await hook(envelope.message)
        except Exception as error:
            _fail(envelope, error)
            raise
        except BaseException:
            _fail(envelope, ActorStopped(f"actor '{self.name}' stopped before answering"))
            raise
        _answer(envelope, value)

    def next_control(self) -> Envelope[Any] | None:
        """Return the next control envelope, or None when the control inbox holds none.

        ``run`` takes control messages only through this hook; an actor that holds some
        back for later (a subtask deferring triggers behind an unaligned one) overrides it.
        """
        try:
            return self.context.control.receive_nowait()
        except (MailboxEmpty, EndOfMailbox):
            return None


def _answer(envelope: Envelope[Any], value: Any) -> None:
    if envelope.reply is not None:
        envelope.reply.set(value)


def _fail(envelope: Envelope[Any], error: BaseException) -> None:
    if envelope.reply is not None:
        envelope.reply.fail(error)
