"""JobClient and JobResult: how a caller follows, measures and stops a running job."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio

from lockgate.engine.api.job_status import JobStatus
from lockgate.engine.checkpointing.completed import CompletedCheckpoint
from lockgate.engine.checkpointing.requests import CheckpointRequest, StopRequest
from lockgate.engine.checkpointing.storage import savepoint_folder_for
from lockgate.engine.errors import JobError
from lockgate.engine.events import SnapshotKind, SnapshotOptions
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.runtime.job.event_subscription import EventSubscription
from lockgate.engine.runtime.job.job_master import JobMaster
from lockgate.engine.runtime.job.lifecycle import (
    JobCanceled,
    JobEvent,
    JobFailed,
    JobFailure,
    JobFinished,
    JobRestarting,
    JobStarted,
)
from lockgate.engine.runtime.metrics import JobMetrics
from lockgate.engine.time.clock import Clock

__all__ = ["JobClient", "JobResult"]


@dataclass(frozen=True, slots=True)
class JobResult:
    """How a job ended: its status, how long it ran, and its final metrics.

    ``status`` is ``FINISHED`` or ``CANCELED``; a failed job raises instead of returning.
    """

    job_name: str
    status: JobStatus
    duration: float
    metrics: JobMetrics


class JobClient:
    """A handle on a running job: ``wait`` for it, read its ``metrics``, take savepoints, stop it.

    ``wait`` returns the ``JobResult`` once the job finished or was cancelled, and raises
    the job's error if it failed (an ``OperatorError`` names the operator and subtask).
    ``status`` follows the job's lifecycle events as they happen, ``failures`` lists every
    failed attempt from the first failure on (a job that fails in every attempt is
    ``RESTARTING`` with its exception there before its first restart), and ``events()``
    yields the lifecycle events to any number of subscribers without ever slowing the job.
    ``query_state`` reads one key's keyed state from the subtask that owns it.
    """

    def __init__(self, master: JobMaster, clock: Clock) -> None:
        self._master = master
        self._clock = clock
        self._status = JobStatus.CREATED
        self._done = anyio.Event()
        self._result: JobResult | None = None
        self._error: BaseException | None = None
        self._error_raised = False
        self._start_time: float | None = None
        self._end_time: float | None = None
        master.events.listen(self._on_event)

    @property
    def name(self) -> str:
        """The job's name."""
        return self._master.name

    @property
    def status(self) -> JobStatus:
        """The job's status now."""
        return self._status

    @property
    def plan(self) -> ExecutionPlan:
        """The job's execution plan: its chains, the edges between them, their parallelism."""
        return self._master.plan

    @property
    def clock(self) -> Clock:
        """The clock the job reads time from (checkpoint statistics are on it)."""
        return self._clock

    @property
    def start_time(self) -> float | None:
        """When the first attempt started, as its ``JobStarted`` event says; ``None`` before.

        The time of day on the job's clock: wall-clock seconds since the epoch on the
        ``SystemClock`` (see ``wall_time_of``).
        """
        return self._start_time

    @property
    def end_time(self) -> float | None:
        """When the job ended (its terminal event), on the same scale; ``None`` until then."""
        return self._end_time

    @property
    def failures(self) -> tuple[JobFailure, ...]:
        """Every failed attempt so far, oldest first: its number, wall-clock time and exception.

        A failure is here as soon as its attempt has failed, before the restart delay; the
        last one of a ``FAILED`` job is the error ``wait`` raises.
        """
        return tuple(self._master.failures)

    def events(self, *, capacity: int = 1024) -> EventSubscription:
        """Subscribe to the job's lifecycle events from now on; iterate with ``async for``.

        The subscription starts when this is called (earlier events are not replayed) and
        ends after the job's last event (``JobFinished``, ``JobFailed`` or ``JobCanceled``);
        called after the job ended, it yields nothing. At most ``capacity`` events wait for
        the subscriber: the job never waits for it, and a subscriber that falls further
        behind gets one ``EventsDropped`` in the place of the events it lost.
        """
        return self._master.events.subscribe(capacity)

    def metrics(self) -> JobMetrics:
        """Return every subtask's counters now."""
        return self._master.metrics()

    async def query_state(self, uid: str, state_name: str, key: Any) -> Any:
        """Return ``key``'s current value of the keyed state ``state_name`` of operator ``uid``.

        The subtask that owns the key's key group reads it on its own loop, between two
        batches, so the value is the one every record it has processed so far made, and it
        is the caller's own copy. What the state's handle returns: a value state's
        ``value()`` (the descriptor's default for a key without one), a list state's
        ``get()``, a map state's items as a dict, a reducing or aggregating state's ``get()``
        (``None`` for a key without one). ``key`` is a key as the ``key_by`` function
        returns it; a ``reduce`` keeps its value in the state ``"reduced"``, an
        ``aggregate`` its result in ``"aggregated"``. While the job starts (restoring its
        state) the query waits for it; under backpressure, for the subtask's next turn.

        Raises:
            QueryStateError: an unknown uid, an operator without keyed state, a state it
                has not declared (the message lists those it has), a key that cannot be
                routed, or a job that is restarting (query again once it runs), finished,
                failed or cancelled.
        """
        return await self._master.state_queries.query(uid, state_name, key)

    async def trigger_checkpoint(self) -> CompletedCheckpoint:
        """Take a checkpoint now; return it once complete and committed by every subtask.

        What the checkpoint made visible in the job's sinks (``CollectSink.results``, a
        ``CommittedSink``'s subscribers) is there when this returns. Asked while the job
        restarts, the next attempt takes it.

        Raises:
            CheckpointError: the checkpoint did not complete.
            JobError: it completed, but the attempt ended before every subtask committed it
                (an attempt restored from it commits it), or the job has ended.
        """
        ticket = await self._master.trigger_checkpoint()
        return await ticket.wait()

    async def trigger_savepoint(self, path: str) -> str:
        """Take a savepoint under the folder ``path`` and return the savepoint's own folder.

        ``path`` is a ``file://`` URL, an absolute path or an ``s3://`` URL; the savepoint is
        written to ``<path>/savepoint-<job>-<id>-<random>`` in the canonical format and is
        never deleted by the job. As in Flink 1.15+, it commits nothing: transactions
        pre-committed at it are committed by the next checkpoint. A ``memory://`` or
        relative ``path`` raises ``ValueError``; a savepoint that fails raises
        ``CheckpointError``, and the job keeps running either way.
        """
        savepoint_folder_for(path)  # a bad target fails here, not in every subtask
        options = SnapshotOptions(SnapshotKind.SAVEPOINT, path)
        ticket = await self._master.trigger_checkpoint(CheckpointRequest(options))
        return _folder_of(await ticket.wait())

    async def stop_with_savepoint(self, path: str, *, drain: bool = False) -> str:
        """Stop the job with a savepoint under ``path``; return the savepoint's folder.

        Without ``drain`` the sources stop right after the savepoint's barrier. With it they
        end their input first, so every operator fires and flushes what it holds, and the
        savepoint is the final snapshot. Either way the savepoint is the job's last
        snapshot: sinks commit everything up to it (a restore from it is exactly-once end to
        end), and this returns once the job has finished. If the savepoint fails,
        ``CheckpointError`` is raised and the job keeps running, as in Flink.
        """
        savepoint_folder_for(path)
        ticket = await self._master.trigger_checkpoint(StopRequest(path, drain))
        folder = _folder_of(await ticket.wait())
        if self._status is JobStatus.RUNNING:  # the job stops after its stop savepoint
            self._status = self._status.advance(JobStatus.FINISHING)
        await self.wait()
        return folder

    def fail_attempt(self, failure: JobError) -> bool:
        """Fail the running attempt with ``failure``, as a crashed process would (a fault).

        For simulations and failure tests: the attempt's subtasks stop at once and the
        restart strategy decides what follows, as after any failure (the next attempt
        restores the latest checkpoint). Returns ``False``, doing nothing, when no attempt
        runs (the job waits to restart, or has ended).
        """
        return self._master.fail_attempt(failure)

    def cancel(self) -> None:
        """Cancel the job; ``wait`` then returns a result with status ``CANCELED``.

        The status is ``FINISHING`` until the job's subtasks stopped. A job waiting to
        restart is cancelled at once, without waiting out the restart delay; one whose
        attempt is failing ends ``CANCELED`` too (that attempt's error in ``failures``),
        unless the failure is one its restart strategy does not restart: then it fails.
        """
        if self._status.is_terminal:
            return
        if self._status is not JobStatus.FINISHING:
            self._status = self._status.advance(JobStatus.FINISHING)
        self._master.cancel()

    async def wait(self) -> JobResult:
        """Wait for the job to end; return its result or raise its error."""
        await self._done.wait()
        if self._error is not None:
            self._error_raised = True
            raise self._error
        assert self._result is not None
        return self._result

    async def run(self) -> None:
        """Run the job to its end, recording the result or the error (for ``start``)."""
        started = self._clock.now()
        try:
            finished = await self._master.run()
        except Exception as error:
            self._error = error
        else:
            status = JobStatus.FINISHED if finished else JobStatus.CANCELED
            duration = self._clock.now() - started
            self._result = JobResult(self.name, status, duration, self._master.metrics())
        finally:
            self._done.set()

    def _on_event(self, event: JobEvent) -> None:
        if isinstance(event, JobStarted) and self._start_time is None:
            self._start_time = event.time
        if event.is_terminal:
            self._end_time = event.time
        target = _STATUS_AFTER.get(type(event))
        if target is not None:
            self._status = self._status.advance(target)

    @property
    def failure(self) -> BaseException | None:
        """The job's error, if it failed."""
        return self._error

    @property
    def unobserved_failure(self) -> BaseException | None:
        """The job's error if it failed and ``wait`` has not raised it yet."""
        return None if self._error_raised else self._error

    def __repr__(self) -> str:
        return f"<JobClient {self.name!r} {self._status.value}>"


# The events that move a job's status; the others (checkpoints, restores) leave it as it is.
_STATUS_AFTER: dict[type[JobEvent], JobStatus] = {
    JobStarted: JobStatus.RUNNING,
    JobRestarting: JobStatus.RESTARTING,
    JobFinished: JobStatus.FINISHED,
    JobFailed: JobStatus.FAILED,
    JobCanceled: JobStatus.CANCELED,
}


def _folder_of(completed: CompletedCheckpoint) -> str:
    return completed.location.rsplit("/", 1)[0]
