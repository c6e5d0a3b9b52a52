"""CheckpointDecider: the checkpoint coordinator's decisions, with no event loop and no I/O.

Flink's CheckpointRequestDecider and CheckpointFailureManager in one small class: whether a
checkpoint may start now, its id, which subtasks hear its trigger, when failed checkpoints
fail the job, and how the job ends (``JobEnding``). It is told what happened, with time
passed in as numbers, and answers with what to do; the coordinator actor does it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, replace

from lockgate.actors import IllegalStateTransition
from lockgate.engine.checkpointing.config import CheckpointConfig
from lockgate.engine.checkpointing.messages import CheckpointFailureReason, SubtaskId
from lockgate.engine.checkpointing.pending import PendingCheckpoint
from lockgate.engine.events import CHECKPOINT, SnapshotKind, SnapshotOptions

__all__ = [
    "CheckpointDecider",
    "DrainSources",
    "FailJob",
    "JobEnding",
    "Refuse",
    "StartCheckpoint",
    "StopJob",
]

# Flink's CheckpointFailureManager counts these; a checkpoint subsumed, aborted by a newer
# barrier, failed with its subtask or ended with the job says nothing about the next one.
_COUNTED = frozenset(
    {
        CheckpointFailureReason.TIMEOUT,
        CheckpointFailureReason.DECLINED,
        CheckpointFailureReason.STORAGE_FAILED,
    }
)


class JobEnding(enum.Enum):
    """How far a job has come towards its end; ``advance`` allows only the table's edges.

    A job is ``RUNNING`` until it ends one of three ways: every subtask finished (the final
    checkpoint), a stop-with-savepoint that drains first (``DRAINING``, then the stop
    savepoint as the final snapshot), or one that does not (``STOPPING_WITH_SAVEPOINT``).
    It is ``STOPPED`` once its final snapshot completed. A final snapshot that fails leaves
    the job ``RUNNING`` again, as in Flink; an illegal move raises naming both states.
    """

    RUNNING = "running"
    DRAINING = "draining"
    FINAL_CHECKPOINT = "final checkpoint"
    STOPPING_WITH_SAVEPOINT = "stopping with savepoint"
    STOPPED = "stopped"

    def advance(self, target: JobEnding) -> JobEnding:
        """Return ``target`` if the table allows moving there, else raise naming both states."""
        if target not in _TRANSITIONS[self]:
            raise IllegalStateTransition("job ending", self, target)
        return target


_TRANSITIONS: dict[JobEnding, frozenset[JobEnding]] = {
    # every subtask finished / a stop with drain / a stop without drain
    JobEnding.RUNNING: frozenset(
        {JobEnding.FINAL_CHECKPOINT, JobEnding.DRAINING, JobEnding.STOPPING_WITH_SAVEPOINT}
    ),
    # the drained inputs ended: the stop savepoint is the final snapshot
    JobEnding.DRAINING: frozenset({JobEnding.FINAL_CHECKPOINT}),
    # it completed / it failed (then, every subtask having finished, a new final checkpoint)
    JobEnding.FINAL_CHECKPOINT: frozenset({JobEnding.STOPPED, JobEnding.RUNNING}),
    # it completed / it failed / every subtask finished first: a new stop savepoint is final
    JobEnding.STOPPING_WITH_SAVEPOINT: frozenset(
        {JobEnding.STOPPED, JobEnding.RUNNING, JobEnding.FINAL_CHECKPOINT}
    ),
    JobEnding.STOPPED: frozenset(),
}


@dataclass(frozen=True, slots=True)
class StartCheckpoint:
    """Answer: trigger checkpoint ``checkpoint_id`` with ``options`` now.

    Ids are handed out once each, in increasing order. A ``final`` one is the job's last
    snapshot: the job stops once it completed.
    """

    checkpoint_id: int
    options: SnapshotOptions = CHECKPOINT
    final: bool = False


@dataclass(frozen=True, slots=True)
class Refuse:
    """Answer: take no checkpoint for this request; tell the client ``message``.

    Nothing changed: a refused request leaves the decider as it was.
    """

    message: str


@dataclass(frozen=True, slots=True)
class DrainSources:
    """Answer: tell every source to end its input; the stop savepoint follows.

    The decider triggers the savepoint itself once every subtask reported it finished.
    """


@dataclass(frozen=True, slots=True)
class FailJob:
    """Answer: fail the job; more checkpoints failed in a row than it tolerates.

    ``failures`` is always greater than ``tolerable``; ``checkpoint_id`` and ``reason``
    name the checkpoint whose failure was one too many.
    """

    checkpoint_id: int
    reason: CheckpointFailureReason
    failures: int
    tolerable: int

    @property
    def message(self) -> str:
        """Why the job fails, naming the setting to change."""
        return (
            f"{self.failures} checkpoints failed in a row, more than "
            f"tolerable_failures={self.tolerable}; the job fails"
        )


@dataclass(frozen=True, slots=True)
class StopJob:
    """Answer: the final snapshot ``checkpoint_id`` completed; stop every subtask.

    Given once per job: the ending is ``STOPPED`` afterwards and moves no more.
    """

    checkpoint_id: int


class CheckpointDecider:
    """Decides when checkpoints start and end a job; the coordinator actor carries it out.

    Ids increase by one per started checkpoint. A periodic checkpoint starts only while the
    job is ``RUNNING``, ``min_pause`` after the last completed checkpoint, with fewer than
    ``max_concurrent`` pending; a request is refused only once the job is ending. More than
    ``tolerable_failures`` counted failures in a row fail the job; any completion resets
    the count. The decider never reads a clock: every ``now`` is passed in.
    """

    def __init__(
        self, config: CheckpointConfig, *, job_name: str, next_checkpoint_id: int = 1
    ) -> None:
        self._config = config
        self._job_name = job_name
        self._next_id = next_checkpoint_id
        self._ending = JobEnding.RUNNING
        self._final_id: int | None = None
        self._stop: SnapshotOptions | None = None
        self._finished: set[SubtaskId] = set()
        self._input_ended: set[SubtaskId] = set()
        self._all_finished = False
        self._failures_in_a_row = 0
        self._last_completed_at = -float("inf")

    @property
    def ending(self) -> JobEnding:
        """How far the job has come towards its end."""
        return self._ending

    @property
    def next_checkpoint_id(self) -> int:
        """The id the next started checkpoint gets."""
        return self._next_id

    @property
    def final_checkpoint_id(self) -> int | None:
        """The id of the job's final snapshot once started; ``None`` before, or after it failed."""
        return self._final_id

    @property
    def failures_in_a_row(self) -> int:
        """Counted checkpoint failures since the last completion."""
        return self._failures_in_a_row

    @property
    def periodic_interval(self) -> float | None:
        """Seconds between two periodic tries; ``None``: no periodic checkpoints."""
        return self._config.interval

    def start(self, options: SnapshotOptions = CHECKPOINT) -> StartCheckpoint:
        """Start a checkpoint with ``options`` whatever the rules say: the next id."""
        checkpoint_id = self._next_id
        self._next_id += 1
        return StartCheckpoint(checkpoint_id, options)

    def periodic(self, now: float, *, pending: int) -> StartCheckpoint | None:
        """Start a periodic checkpoint at ``now``, ``pending`` being in progress, if allowed."""
        if self.periodic_interval is None or self._ending is not JobEnding.RUNNING:
            return None
        paused = now - self._last_completed_at < self._config.min_pause
        busy = pending >= self._config.max_concurrent
        return None if paused or busy else self.start()

    def request(self, options: SnapshotOptions) -> StartCheckpoint | Refuse:
        """Start the checkpoint or savepoint a client asked for, unless the job is ending."""
        if self._ending is not JobEnding.RUNNING:
            return Refuse(f"job '{self._job_name}' is stopping; no checkpoint was taken")
        return self.start(options)

    def stop_with_savepoint(
        self, target: str, *, drain: bool
    ) -> StartCheckpoint | DrainSources | Refuse:
        """Stop the job with a savepoint under ``target``: at once, or once its inputs drained."""
        if self._ending is not JobEnding.RUNNING:
            return Refuse(f"job '{self._job_name}' is already stopping")
        self._stop = SnapshotOptions(SnapshotKind.STOP_SAVEPOINT, target)
        if drain:
            self._advance(JobEnding.DRAINING)
            return DrainSources()
        return self._start_final(JobEnding.STOPPING_WITH_SAVEPOINT)

    def trigger_targets(self, sources: frozenset[SubtaskId]) -> frozenset[SubtaskId]:
        """The subtasks a new checkpoint's trigger goes to: no barrier reaches the others'.

        Those are the ``sources``, and every subtask whose input ended or that finished.
        """
        return sources | self._finished | self._input_ended

    def missed_barriers(
        self, subtask: SubtaskId, pending: Iterable[PendingCheckpoint]
    ) -> list[PendingCheckpoint]:
        """The ``pending`` checkpoints to trigger at ``subtask`` whose input just ended.

        Their barriers can no longer reach it through its channels: each one it has not
        acknowledged, oldest first.
        """
        missed = (p for p in pending if not p.has_acknowledged(subtask))
        return sorted(missed, key=lambda p: p.checkpoint_id)

    def on_input_ended(self, subtask: SubtaskId) -> None:
        """``subtask``'s input ended but it still emits: trigger it directly from now on."""
        self._input_ended.add(subtask)

    def on_finished(self, subtask: SubtaskId, *, subtask_count: int) -> StartCheckpoint | None:
        """``subtask`` finished; once all ``subtask_count`` have, start the final snapshot.

        A repeated report starts nothing.
        """
        first = subtask not in self._finished
        self._finished.add(subtask)
        if not first or len(self._finished) != subtask_count:
            return None
        self._all_finished = True
        return self._start_final(JobEnding.FINAL_CHECKPOINT)

    def on_completed(self, checkpoint_id: int, *, kind: SnapshotKind, now: float) -> StopJob | None:
        """Checkpoint ``checkpoint_id`` of ``kind`` completed at ``now``; stop if it was final.

        Any completion resets the failures in a row; only a checkpoint (never a savepoint)
        starts the ``min_pause``.
        """
        self._failures_in_a_row = 0
        if kind is SnapshotKind.CHECKPOINT:
            self._last_completed_at = now
        if checkpoint_id != self._final_id:
            return None
        self._advance(JobEnding.STOPPED)
        return StopJob(checkpoint_id)

    def on_aborted(
        self, checkpoint_id: int, reason: CheckpointFailureReason
    ) -> FailJob | StartCheckpoint | None:
        """Checkpoint ``checkpoint_id`` was aborted for ``reason``: fail the job, or retry.

        Situations, in order: one counted failure too many fails the job; a failed final
        snapshot leaves the job running, and (every subtask having finished) starts a final
        checkpoint again; an abort because the job ended retries nothing.
        """
        failure = self._count(checkpoint_id, reason)
        if failure is not None:
            return failure
        if checkpoint_id != self._final_id or reason is CheckpointFailureReason.JOB_ENDED:
            return None
        self._advance(JobEnding.RUNNING)
        self._final_id = self._stop = None  # a failed stop savepoint leaves the job running
        return self._start_final(JobEnding.FINAL_CHECKPOINT) if self._all_finished else None

    def _count(self, checkpoint_id: int, reason: CheckpointFailureReason) -> FailJob | None:
        if reason not in _COUNTED:
            return None
        self._failures_in_a_row += 1
        tolerable = self._config.tolerable_failures
        if self._failures_in_a_row <= tolerable:
            return None
        return FailJob(checkpoint_id, reason, self._failures_in_a_row, tolerable)

    def _start_final(self, ending: JobEnding) -> StartCheckpoint:
        self._advance(ending)
        start = replace(self.start(self._stop or CHECKPOINT), final=True)
        self._final_id = start.checkpoint_id
        return start

    def _advance(self, target: JobEnding) -> None:
        self._ending = self._ending.advance(target)

    def __repr__(self) -> str:
        return (
            f"<CheckpointDecider {self._job_name!r} {self._ending.value} "
            f"next={self._next_id} final={self._final_id} "
            f"failures_in_a_row={self._failures_in_a_row}>"
        )
