"""Recorder: what a simulation's report is made of, gathered while the job runs.

Two streams of facts, both in virtual time: samples of the job's live metrics every
``report_every`` seconds (cumulative counters per subtask, the fill of its channels at that
moment), and every commit of a modelled sink (which arrival, when), counted per interval
of ``report_every`` seconds into latency histograms. Nothing here waits or reads a clock:
the simulation calls ``sample`` on its schedule, the sinks call ``committed``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from lockgate.engine.runtime.job.lifecycle import (
    CheckpointCompleted,
    JobEvent,
    JobStarted,
    RestoredFromCheckpoint,
)
from lockgate.engine.runtime.metrics import CheckpointRecordMetrics, JobMetrics, SubtaskMetrics
from lockgate.engine.simulation.histogram import LatencyHistogram
from lockgate.engine.simulation.models.arrival import Arrival

__all__ = ["CommitInterval", "Recorder", "Sample", "SubtaskKey"]

SubtaskKey = tuple[tuple[str, ...], int]
"""A subtask across samples: the uids of its chain, and its index."""


@dataclass(frozen=True, slots=True)
class Sample:
    """The job's metrics at virtual time ``time``, subtask by subtask."""

    time: float
    attempt: int
    subtasks: dict[SubtaskKey, SubtaskMetrics]


@dataclass(slots=True)
class CommitInterval:
    """What one sink committed in one interval: how many, and their latency and lag."""

    records: int = 0
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)
    lag: LatencyHistogram = field(default_factory=LatencyHistogram)


class Recorder:
    """Keeps the samples and the sinks' commits of one simulation run.

    A commit at virtual time ``t`` belongs to interval ``ceil(t / every) - 1``: interval
    ``k`` is ``(k * every, (k + 1) * every]``, the one sample ``k + 1`` closes. In-engine
    latency runs from an arrival's admission to its commit, event-time lag from its
    intended arrival (``event_time``) to its commit.
    """

    def __init__(self, every: float) -> None:
        self.every = every
        self.samples: list[Sample] = []
        self.commits: dict[str, dict[int, CommitInterval]] = {}
        self.checkpoints: dict[int, CheckpointRecordMetrics] = {}
        self.attempts: list[tuple[float, int]] = []
        self.completed: list[tuple[float, int]] = []
        self.restores: list[tuple[float, int, int]] = []

    def sample(self, time: float, metrics: JobMetrics) -> None:
        """Keep ``metrics`` as the job's state at ``time``, and every checkpoint it lists."""
        subtasks = {(tuple(s.uids), s.subtask_index): s for s in metrics.subtasks}
        self.samples.append(Sample(time, metrics.attempt, subtasks))
        for record in metrics.checkpoints.history:
            self.checkpoints[record.checkpoint_id] = record

    def observe(self, event: JobEvent) -> None:
        """Note when an attempt started or restored, or a checkpoint completed."""
        if isinstance(event, JobStarted):
            self.attempts.append((event.time, event.attempt))
        elif isinstance(event, RestoredFromCheckpoint):
            self.restores.append((event.time, event.attempt, event.checkpoint_id))
        elif isinstance(event, CheckpointCompleted) and not event.is_savepoint:
            self.completed.append((event.time, event.checkpoint_id))

    def committed(self, uid: str, arrivals: Sequence[Arrival], times: Sequence[float]) -> None:
        """Count ``arrivals[i]``, committed by sink ``uid`` at ``times[i]``."""
        intervals = self.commits.setdefault(uid, {})
        every = self.every
        latencies: dict[int, list[float]] = {}
        lags: dict[int, list[float]] = {}
        for arrival, time in zip(arrivals, times, strict=True):
            index = max(0, math.ceil(time / every) - 1)
            if index not in latencies:
                latencies[index], lags[index] = [], []
            latencies[index].append(time - arrival.admitted_at)
            lags[index].append(time - arrival.event_time)
        for index, latency in latencies.items():
            interval = intervals.get(index)
            if interval is None:
                interval = intervals[index] = CommitInterval()
            interval.records += len(latency)
            interval.latency.add_all(latency)
            interval.lag.add_all(lags[index])

    def sinks(self) -> list[str]:
        """The uids of the sinks that committed anything, in the order they first did."""
        return list(self.commits)

    def __repr__(self) -> str:
        return f"<Recorder samples={len(self.samples)} sinks={len(self.commits)}>"
