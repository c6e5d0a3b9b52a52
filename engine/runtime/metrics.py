"""Metrics: what ``job.metrics()`` reports, as frozen dataclasses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lockgate.engine.state.backend import KeyedStateStatistics

__all__ = ["AsyncIoMetrics", "JobMetrics", "SubtaskMetrics"]


@dataclass(frozen=True, slots=True)
class AsyncIoMetrics:
    """Counters of one ``async_map`` operator in one subtask.

    ``in_flight`` calls are running now, never more than ``capacity``; ``queued`` records
    are in the operator's queue (called, or with a result waiting for its turn) and
    ``backlog`` wait outside it for room. ``calls`` counts every attempt, ``retries`` the
    attempts after a failure, ``timeouts`` the attempts the timeout cut, ``failures`` the
    records whose attempts were all spent. Latency percentiles (seconds, on the job's clock)
    cover the last 1,024 attempts that returned; ``None`` before the first.
    """

    uid: str
    subtask_index: int
    capacity: int
    in_flight: int
    queued: int
    backlog: int
    calls: int
    completed: int
    retries: int
    timeouts: int
    failures: int
    latency_p50: float | None
    latency_p95: float | None
    latency_p99: float | None


@dataclass(frozen=True, slots=True)
class SubtaskMetrics:
    """Counters of one subtask: traffic, input fill, and where its time went.

    ``busy_time + idle_time + backpressured_time`` is the time since the subtask started:
    idle is waiting for input, backpressured is waiting for room in a full output channel,
    each up to now (a wait going on counts as far as it went).
    ``async_io`` holds the counters of each ``async_map`` operator the subtask runs, and
    ``keyed_state`` (operator uid, statistics) the keyed state backend of each operator that
    keeps keyed state: its states, entries, snapshots, and how it was restored.
    """

    chain: str
    uids: tuple[str, ...]
    subtask_index: int
    parallelism: int
    records_in: int
    records_out: int
    input_buffered: int
    input_capacity: int
    output_buffered: int
    busy_time: float
    idle_time: float
    backpressured_time: float
    async_io: tuple[AsyncIoMetrics, ...] = ()
    keyed_state: tuple[tuple[str, KeyedStateStatistics], ...] = ()

    @property
    def mailbox_fill(self) -> float:
        """How full the input channels are together, from 0.0 to 1.0 (0.0 for sources)."""
        return self.input_buffered / self.input_capacity if self.input_capacity else 0.0


@dataclass(frozen=True, slots=True)
class JobMetrics:
    """The metrics of every subtask of a job, chain by chain, and its checkpoint statistics.

    ``checkpoints`` is a ``CheckpointStatistics`` snapshot: per checkpoint its trigger time,
    duration, bytes, per-subtask acknowledgement delay, alignment and start delay, and why it
    failed. ``attempt`` counts restarts (0 for the first attempt).
    """

    job_name: str
    subtasks: tuple[SubtaskMetrics, ...]
    checkpoints: Any = None
    attempt: int = 0

    def of(self, uid: str) -> tuple[SubtaskMetrics, ...]:
        """The subtasks that run operator ``uid``."""
        return tuple(s for s in self.subtasks if uid in s.uids)

    def async_io(self, uid: str) -> tuple[AsyncIoMetrics, ...]:
        """The counters of ``async_map`` operator ``uid``, one per subtask."""
        return tuple(a for s in self.subtasks for a in s.async_io if a.uid == uid)

    def keyed_state(self, uid: str) -> tuple[KeyedStateStatistics, ...]:
        """The statistics of operator ``uid``'s keyed state, one per subtask that keeps any."""
        return tuple(stats for s in self.subtasks for name, stats in s.keyed_state if name == uid)

    @property
    def records_buffered(self) -> int:
        """Records held inside the job right now: in channels and in output buffers."""
        return sum(s.input_buffered + s.output_buffered for s in self.subtasks)

    @property
    def channel_capacity(self) -> int:
        """Records all the job's channels can hold together."""
        return sum(s.input_capacity for s in self.subtasks)
