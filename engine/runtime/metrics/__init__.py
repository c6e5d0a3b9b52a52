"""Metrics: what ``job.metrics()`` reports, how rates are taken, and the one table of names.

``model`` holds the frozen, JSON-ready dataclasses (``JobMetrics``, ``SubtaskMetrics``,
``OperatorMetrics``, ``AsyncIoMetrics``), ``checkpoints`` the checkpoint history as plain
data, ``latency`` the whole-run latency histogram, ``rates`` the rolling window ☐,
``counters`` what a subtask counts, ``record_bytes`` how its records' bytes are estimated
☐, ``view`` how they become a ``JobMetrics``, and ``names`` every metric's name.
"""

from __future__ import annotations

from lockgate.engine.runtime.metrics.checkpoints import CheckpointMetrics, CheckpointRecordMetrics
from lockgate.engine.runtime.metrics.latency import LatencyMetrics
from lockgate.engine.runtime.metrics.model import (
    AsyncIoMetrics,
    JobMetrics,
    OperatorMetrics,
    SubtaskMetrics,
)

__all__ = [
    "AsyncIoMetrics",
    "CheckpointMetrics",
    "CheckpointRecordMetrics",
    "JobMetrics",
    "LatencyMetrics",
    "OperatorMetrics",
    "SubtaskMetrics",
]
