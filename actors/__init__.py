"""lockgate.actors: a small actor runtime on anyio, with bounded mailboxes.

It knows nothing of streams. An ``ActorSystem`` owns actors for the length of an ``async with``
block; each ``Actor`` reads a bounded data inbox and a control inbox that data never blocks;
``Channel`` is the bounded point-to-point queue the engine builds its data edges from.
"""

from lockgate.actors.actor import Actor, ActorContext, StopActor
from lockgate.actors.channels import Channel
from lockgate.actors.doorbell import Doorbell
from lockgate.actors.errors import (
    ActorCrashed,
    ActorError,
    ActorStopped,
    AskTimeout,
    EndOfMailbox,
    IllegalStateTransition,
    MailboxClosed,
    MailboxEmpty,
    MailboxError,
    MailboxFull,
)
from lockgate.actors.mailbox import Mailbox, MailboxStatistics
from lockgate.actors.ref import ActorRef
from lockgate.actors.system import ActorSystem
from lockgate.actors.testing import Probe

__all__ = [
    "Actor",
    "ActorContext",
    "ActorCrashed",
    "ActorError",
    "ActorRef",
    "ActorStopped",
    "ActorSystem",
    "AskTimeout",
    "Channel",
    "Doorbell",
    "EndOfMailbox",
    "IllegalStateTransition",
    "Mailbox",
    "MailboxClosed",
    "MailboxEmpty",
    "MailboxError",
    "MailboxFull",
    "MailboxStatistics",
    "Probe",
    "StopActor",
]
