"""Errors of the actor runtime.

```
ActorError
├── MailboxError
│   ├── MailboxFull        send_nowait found no room (the receiver is slower than you)
│   ├── MailboxEmpty       receive_nowait found nothing yet (try again later)
│   ├── MailboxClosed      you closed it, then sent to it (a bug on your side)
│   └── EndOfMailbox       the sender closed it and every message was received (a clean end)
├── ActorStopped           the actor you address is gone (the other side)
├── ActorCrashed           an actor raised; the original exception is its __cause__
├── AskTimeout             no reply came within the timeout given to ask()
└── IllegalStateTransition a lifecycle was asked to move along an edge it does not have
```
"""

from __future__ import annotations

__all__ = [
    "ActorCrashed",
    "ActorError",
    "ActorStopped",
    "AskTimeout",
    "EndOfMailbox",
    "IllegalStateTransition",
    "MailboxClosed",
    "MailboxEmpty",
    "MailboxError",
    "MailboxFull",
]


class ActorError(Exception):
    """Root of every error raised by lockgate.actors."""


class MailboxError(ActorError):
    """Root of the errors a mailbox raises."""


class MailboxFull(MailboxError):
    """send_nowait() found no room; await send() to wait for it instead."""


class MailboxEmpty(MailboxError):
    """receive_nowait() found no message; await receive() to wait for one instead."""


class MailboxClosed(MailboxError):
    """The mailbox was closed on the sending side; nothing more may be sent to it."""


class EndOfMailbox(MailboxError):
    """The mailbox was closed and every message in it has been received."""


class ActorStopped(ActorError):
    """The addressed actor has stopped; it receives nothing more."""


class ActorCrashed(ActorError):
    """An actor raised an exception; it is attached as ``__cause__``.

    Attributes:
        actor: the name of the actor that crashed.
    """

    def __init__(self, actor: str, message: str) -> None:
        super().__init__(message)
        self.actor = actor


class AskTimeout(ActorError):
    """No reply arrived within the timeout given to ``ActorRef.ask``."""


class IllegalStateTransition(ActorError):
    """A lifecycle was asked to move from one state to another along an edge it lacks."""

    def __init__(self, lifecycle: str, current: object, target: object) -> None:
        super().__init__(f"{lifecycle} cannot move from {current} to {target}")
        self.current = current
        self.target = target
