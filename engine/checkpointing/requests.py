"""What clients ask of the checkpoint coordinator, and the tickets they get back."""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from lockgate.engine.checkpointing.completed import CompletedCheckpoint
from lockgate.engine.errors import JobError
from lockgate.engine.events import CHECKPOINT, SnapshotOptions

__all__ = ["CheckpointRequest", "CheckpointTicket", "StopRequest", "refused"]


@dataclass(frozen=True, slots=True)
class CheckpointRequest:
    """Client -> coordinator: take a checkpoint now; the answer is a ``CheckpointTicket``.

    With savepoint ``options`` the target is the folder under which the savepoint's own
    folder, ``savepoint-<job>-<id>-<random>``, is made.
    """

    options: SnapshotOptions = CHECKPOINT


@dataclass(frozen=True, slots=True)
class StopRequest:
    """Client -> coordinator: stop the job with a savepoint under ``target``.

    Without ``drain`` the sources stop right after the savepoint's barrier; with it they end
    their input first, everything downstream fires and flushes, and the savepoint is the
    final snapshot. Either way it commits, and the job stops once it completed. The answer
    is a ``CheckpointTicket``.
    """

    target: str
    drain: bool = False


class CheckpointTicket:
    """The future result of one requested checkpoint: ``await ticket.wait()``."""

    def __init__(self, checkpoint_id: int) -> None:
        self.checkpoint_id = checkpoint_id
        self._done = anyio.Event()
        self._completed: CompletedCheckpoint | None = None
        self._failure: BaseException | None = None

    def complete(self, completed: CompletedCheckpoint) -> None:
        """Resolve the ticket with the completed checkpoint."""
        self._completed = completed
        self._done.set()

    def fail(self, failure: BaseException) -> None:
        """Resolve the ticket with an error."""
        self._failure = failure
        self._done.set()

    async def wait(self) -> CompletedCheckpoint:
        """Return the completed checkpoint, or raise why it did not complete."""
        await self._done.wait()
        if self._failure is not None:
            raise self._failure
        assert self._completed is not None
        return self._completed


def refused(message: str) -> CheckpointTicket:
    """Return a ticket that already failed with ``JobError(message)``."""
    ticket = CheckpointTicket(-1)
    ticket.fail(JobError(message))
    return ticket
