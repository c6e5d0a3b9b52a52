"""CheckpointTickets: the clients waiting for each checkpoint's outcome, and for its commits."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lockgate.engine.checkpointing.completed import CompletedCheckpoint
from lockgate.engine.checkpointing.messages import SubtaskId
from lockgate.engine.checkpointing.requests import CheckpointTicket
from lockgate.engine.errors import JobError

__all__ = ["CheckpointTickets"]

_ENDED = "the job's attempt ended before the checkpoint completed"


@dataclass(slots=True)
class _Committing:
    completed: CompletedCheckpoint
    subtasks: set[SubtaskId]
    tickets: list[CheckpointTicket] = field(default_factory=list)


class CheckpointTickets:
    """The tickets of one coordinator's clients, by checkpoint, until each is resolved.

    A ticket resolves once: with the ``CheckpointError`` of a checkpoint that failed, or
    with the ``CompletedCheckpoint``. A completed checkpoint that commits (not a savepoint)
    and does not stop the job resolves its tickets only once every subtask that heard
    ``NotifyCheckpointComplete`` reported ``CheckpointCommitted``: what the checkpoint made
    visible in sinks is there when a client's ``trigger_checkpoint`` returns. Flink's
    notifications are asynchronous, and so are these: only a checkpoint a client waits for
    is watched. A stop's tickets resolve at once (the client then waits for the job's end).
    The attempt's end (``ended``) fails every ticket left.
    """

    def __init__(self, job_name: str) -> None:
        self._job_name = job_name
        self._waiting: dict[int, list[CheckpointTicket]] = {}
        self._committing: dict[int, _Committing] = {}
        self._stops: list[CheckpointTicket] = []

    def add(self, ticket: CheckpointTicket) -> CheckpointTicket:
        """Wait with ``ticket`` for its checkpoint; return it."""
        self._waiting.setdefault(ticket.checkpoint_id, []).append(ticket)
        return ticket

    def add_stop(self, ticket: CheckpointTicket) -> CheckpointTicket:
        """Wait with ``ticket`` for the final checkpoint of a drain, not started yet."""
        self._stops.append(ticket)
        return ticket

    def final_started(self, checkpoint_id: int) -> None:
        """The drain's final checkpoint is ``checkpoint_id``: its stop tickets wait for it."""
        self._waiting.setdefault(checkpoint_id, []).extend(self._stops)
        self._stops = []

    def completed(self, completed: CompletedCheckpoint, committers: Iterable[SubtaskId]) -> None:
        """``completed`` exists; resolve its tickets once ``committers`` committed it."""
        tickets = self._waiting.pop(completed.checkpoint_id, [])
        subtasks = set(committers)
        if not subtasks or not tickets:
            _complete(tickets, completed)
            return
        self._committing[completed.checkpoint_id] = _Committing(completed, subtasks, tickets)

    def committed(self, checkpoint_id: int, subtask: SubtaskId) -> None:
        """``subtask`` committed ``checkpoint_id``: resolve its tickets if it was the last."""
        committing = self._committing.get(checkpoint_id)
        if committing is None:
            return  # nobody waits for this checkpoint's commits
        committing.subtasks.discard(subtask)
        if not committing.subtasks:
            del self._committing[checkpoint_id]
            _complete(committing.tickets, committing.completed)

    def failed(self, checkpoint_id: int, failure: BaseException) -> None:
        """``checkpoint_id`` will never complete: fail its tickets with ``failure``."""
        for ticket in self._waiting.pop(checkpoint_id, []):
            ticket.fail(failure)

    def ended(self, describe: Callable[[SubtaskId], str]) -> None:
        """The attempt ended: fail the tickets of drains and of commits not finished."""
        for ticket in self._stops:
            ticket.fail(
                JobError(
                    f"job '{self._job_name}' attempt ended before its inputs drained; "
                    "no stop savepoint was taken"
                )
            )
        self._stops = []
        for checkpoint_id, committing in sorted(self._committing.items()):
            missing = ", ".join(sorted(describe(subtask) for subtask in committing.subtasks))
            error = JobError(
                f"checkpoint {checkpoint_id} completed, but job '{self._job_name}' attempt "
                f"ended before every subtask committed it ({missing} had not): what it made "
                "visible is committed when an attempt restores from it (commits are "
                "idempotent); trigger another checkpoint once the job runs again"
            )
            for ticket in committing.tickets:
                ticket.fail(error)
        self._committing.clear()
        for checkpoint_id in sorted(self._waiting):  # none once the pending ones are aborted
            self.failed(checkpoint_id, JobError(f"checkpoint {checkpoint_id}: {_ENDED}"))

    def __repr__(self) -> str:
        return (
            f"<CheckpointTickets waiting={sorted(self._waiting)} "
            f"committing={sorted(self._committing)} stops={len(self._stops)}>"
        )


def _complete(tickets: list[CheckpointTicket], completed: CompletedCheckpoint) -> None:
    for ticket in tickets:
        ticket.complete(completed)
