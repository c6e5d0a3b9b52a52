"""JobEvents: the one place a job's lifecycle steps become log records and typed events."""

from __future__ import annotations

import logging
from collections.abc import Callable

from lockgate.engine.checkpointing.completed import CompletedCheckpoint
from lockgate.engine.checkpointing.statistics import CheckpointRecord
from lockgate.engine.events import SnapshotKind
from lockgate.engine.runtime.job.event_subscription import EventSubscription
from lockgate.engine.runtime.job.lifecycle import (
    CheckpointCompleted,
    CheckpointFailed,
    JobCanceled,
    JobEvent,
    JobFailed,
    JobFinished,
    JobRestarting,
    JobStarted,
    RestoredFromCheckpoint,
)
from lockgate.engine.time.clock import SystemClock, wall_time_of

__all__ = ["JobEvents"]

_LOG = logging.getLogger(__name__)
_SYSTEM_WALL_CLOCK = wall_time_of(SystemClock())

EventListener = Callable[[JobEvent], None]


class JobEvents:
    """Logs each lifecycle step of one job and hands it, as an event, to every subscriber.

    ``emit`` never waits: listeners are called synchronously, in order, before any
    subscriber sees the event (the job client keeps its status with one), and each
    subscription buffers on its own (see ``EventSubscription``). After the job's terminal
    event nothing more is emitted, and a late ``subscribe`` gets an ended subscription.
    The job master and the checkpoint coordinator report through the named methods below,
    which stamp the event with the job's name and the time of day: ``wall_clock``, to which
    the job master passes ``wall_time_of`` its clock (the system's wall clock by default).
    Log records go to the ``lockgate.engine.runtime.job.job_events`` logger; the library
    never configures handlers.
    """

    def __init__(self, job: str, *, wall_clock: Callable[[], float] = _SYSTEM_WALL_CLOCK) -> None:
        self.job = job
        self.wall_clock = wall_clock
        self._listeners: list[EventListener] = []
        self._subscriptions: list[EventSubscription] = []
        self._ended = False

    def listen(self, listener: EventListener) -> None:
        """Call ``listener`` with every later event, before any subscriber; it must not block."""
        self._listeners.append(listener)

    def subscribe(self, capacity: int) -> EventSubscription:
        """Return a subscription to every event from now on, buffering up to ``capacity``."""
        subscription = EventSubscription(capacity)
        if self._ended:
            subscription.close()
        else:
            self._subscriptions.append(subscription)
        return subscription

    def emit(self, event: JobEvent) -> None:
        """Log ``event`` and hand it to every listener and open subscription."""
        if self._ended:
            return
        _LOG.log(event.level, event.message(), exc_info=event.error, extra=event.log_fields())
        for listener in self._listeners:
            listener(event)
        self._subscriptions = [s for s in self._subscriptions if not s.closed]
        for subscription in self._subscriptions:
            subscription.offer(event)
        self._ended = event.is_terminal

    def close(self) -> None:
        """End every subscription (after the terminal event, or when the job's task is gone)."""
        self._ended = True
        for subscription in self._subscriptions:
            subscription.close()
        self._subscriptions.clear()

    def started(self, attempt: int) -> None:
        """Attempt ``attempt`` starts (its restore and deployment follow)."""
        self.emit(JobStarted(self.job, self.wall_clock(), attempt))

    def restored(
        self, attempt: int, checkpoint_id: int, location: str, *, is_savepoint: bool
    ) -> None:
        """Attempt ``attempt`` starts from ``checkpoint_id`` at ``location``."""
        now = self.wall_clock()
        self.emit(
            RestoredFromCheckpoint(self.job, now, attempt, checkpoint_id, location, is_savepoint)
        )

    def restarting(self, attempt: int, cause: BaseException, delay: float) -> None:
        """Attempt ``attempt`` failed with ``cause``; the next starts in ``delay`` seconds."""
        self.emit(JobRestarting(self.job, self.wall_clock(), attempt, cause, delay))

    def finished(self, attempt: int) -> None:
        """The job finished."""
        self.emit(JobFinished(self.job, self.wall_clock(), attempt))

    def canceled(self, attempt: int) -> None:
        """The job was cancelled."""
        self.emit(JobCanceled(self.job, self.wall_clock(), attempt))

    def failed(self, attempt: int, failure: BaseException) -> None:
        """The job failed for good with ``failure``."""
        self.emit(JobFailed(self.job, self.wall_clock(), attempt, failure))

    def checkpoint_completed(self, completed: CompletedCheckpoint, kind: SnapshotKind) -> None:
        """The coordinator completed ``completed`` (a checkpoint or savepoint of ``kind``)."""
        self.emit(
            CheckpointCompleted(
                self.job,
                self.wall_clock(),
                completed.checkpoint_id,
                completed.location,
                kind.is_savepoint,
                completed.duration,
                completed.metadata.state_size,
            )
        )

    def checkpoint_aborted(self, record: CheckpointRecord, kind: SnapshotKind) -> None:
        """The coordinator aborted the checkpoint (or savepoint of ``kind``) ``record`` tells of."""
        assert record.failure_reason is not None, "an aborted checkpoint has a reason"
        self.emit(
            CheckpointFailed(
                self.job,
                self.wall_clock(),
                record.checkpoint_id,
                record.failure_reason,
                record.failure_message,
                kind.is_savepoint,
            )
        )

    def __repr__(self) -> str:
        return (
            f"<JobEvents {self.job!r} subscriptions={len(self._subscriptions)} ended={self._ended}>"
        )
