"""lockgate.actors: a small actor runtime on anyio, with bounded mailboxes.

It knows nothing of streams. An ``ActorSystem`` owns actors for the length of an ``async with``
block; each ``Actor`` reads a bounded data inbox and a control inbox that data never blocks;
``Channel`` is the bounded point-to-point queue the engine builds its data edges from.
"""

from lockgate.actors.actor import Actor, ActorContext
from lockgate.actors.channels import Channel
from lockgate.actors.doorbell import Doorbell
from lockgate.actors.envelope import Envelope
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
from lockgate.actors.messages import StopActor
from lockgate.actors.ref import ActorRef
from lockgate.actors.system import ActorSystem
from lockgate.actors.task_group import run_with_group, single_error
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
    "Envelope",
    "IllegalStateTransition",
    "Mailbox",
    "MailboxClosed",
    "MailboxEmpty",
    "MailboxError",
    "MailboxFull",
    "MailboxStatistics",
    "Probe",
    "StopActor",
    "run_with_group",
    "single_error",
]
