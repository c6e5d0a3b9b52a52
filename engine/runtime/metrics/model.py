"""Metrics: what ``job.metrics()`` reports, as frozen dataclasses of plain data.

Every field holds JSON's types only (str keys, lists, numbers, bools, ``None``), so
``orjson.loads(orjson.dumps(dataclasses.asdict(metrics))) == dataclasses.asdict(metrics)``
holds for a ``JobMetrics``; ``to_json`` writes it. Field names are those of
``lockgate.engine.runtime.metrics.names``, where each has its Flink name, unit and meaning.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import orjson

from lockgate.engine.runtime.metrics.checkpoints import CheckpointMetrics
from lockgate.engine.runtime.metrics.latency import LatencyMetrics
from lockgate.engine.state.backend import KeyedStateStatistics

__all__ = ["AsyncIoMetrics", "JobMetrics", "OperatorMetrics", "SubtaskMetrics"]


@dataclass(frozen=True, slots=True)
class OperatorMetrics:
    """One operator of a chain in one subtask: the records it took in and sent on.

    Counted on its main output (side outputs are the subtask's ``side_output_records``).
    The chain's first operator takes in what the subtask takes in; a source takes in the
    records it reads and sends them all on; a sink takes in the records it writes and
    counts them as sent on, as the subtask's ``records_out`` does. Rates are over the
    job's rolling window, as the subtask's.
    """

    uid: str
    subtask_index: int
    records_in: int
    records_out: int
    records_in_per_second: float
    records_out_per_second: float


@dataclass(frozen=True, slots=True)
class AsyncIoMetrics:
    """Counters of one ``async_map`` operator in one subtask.

    ``in_flight`` calls are running now, never more than ``capacity``; ``queued`` records
    are in the operator's queue (called, or with a result waiting for its turn) and
    ``backlog`` wait outside it for room. ``calls`` counts every attempt, ``retries`` the
    attempts after a failure, ``timeouts`` the attempts the timeout cut, ``failures`` the
    records whose attempts were all spent. ``latency`` is the distribution of every attempt
    that returned since the subtask started (seconds, on the job's clock), percentiles
    within 1%.
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
    latency: LatencyMetrics

    @property
    def latency_p50(self) -> float | None:
        """The median latency, or ``None`` before the first call returned."""
        return self.latency.p50

    @property
    def latency_p95(self) -> float | None:
        """The 95th percentile latency, or ``None`` before the first call returned."""
        return self.latency.p95

    @property
    def latency_p99(self) -> float | None:
        """The 99th percentile latency, or ``None`` before the first call returned."""
        return self.latency.p99


@dataclass(frozen=True, slots=True)
class SubtaskMetrics:
    """One subtask: its traffic, where its time went, its channels, its watermarks.

    ``key`` names it in maps (``"<uid of the chain's first operator>#<subtask index>"``).
    ``busy_time + idle_time + backpressured_time`` is the time since the subtask started:
    idle is waiting for input, backpressured is waiting for room in a full output channel,
    busy the rest, each up to now (a wait going on counts as far as it went). The
    ``..._per_second`` fields are rates over the job's rolling window
    (``JobMetrics.rate_window``). Watermarks are ``None`` before the first one and after the
    last (the end of input). ``split_watermarks`` is keyed by split, for a source subtask
    whose watermarks are made split by split (else empty; ``None`` while a split is idle);
    ``watermark_alignment_drift`` is ``None`` unless the source aligns its watermarks.
    ``bytes_in`` and ``bytes_out`` are the size of the records ``records_in`` and
    ``records_out`` count, as the data plane between processes pickles them, estimated
    from sampled batches (``RecordBytes``); ``None`` when the records cannot be pickled.
    ``operators`` holds each operator of the chain, head first.
    ``late_records_dropped`` is keyed by the uid of each window or interval join operator,
    ``side_output_records`` by side-output tag, ``keyed_state`` by the uid of each operator
    that keeps keyed state.
    """

    key: str
    chain: str
    uids: list[str]
    subtask_index: int
    parallelism: int
    finished: bool
    records_in: int
    records_out: int
    records_in_per_second: float
    records_out_per_second: float
    bytes_in: int | None
    bytes_out: int | None
    bytes_in_per_second: float | None
    bytes_out_per_second: float | None
    busy_time: float
    idle_time: float
    backpressured_time: float
    busy_time_ms_per_second: float
    backpressured_time_ms_per_second: float
    idle_time_ms_per_second: float
    input_buffered: int
    input_capacity: int
    output_buffered: int
    mailbox_fill: float
    output_fill: float
    current_input_watermark: float | None
    current_output_watermark: float | None
    watermark_alignment_drift: float | None
    split_watermarks: dict[str, float | None]
    late_records_dropped: dict[str, int]
    side_output_records: dict[str, int]
    operators: list[OperatorMetrics]
    async_io: list[AsyncIoMetrics]
    keyed_state: dict[str, KeyedStateStatistics]


@dataclass(frozen=True, slots=True)
class JobMetrics:
    """The metrics of every subtask of a job, chain by chain, and its checkpoints.

    ``timestamp`` is when they were read, in seconds since the epoch (on a job whose clock
    is not the system's, a simulation's or a ``ManualClock``, that clock's time).
    ``attempt`` counts restarts (0 for the first attempt); the counters of ``subtasks``
    start from zero with each attempt. ``rate_window`` is the span, in seconds, the
    per-second rates cover.
    """

    job_name: str
    attempt: int
    timestamp: float
    rate_window: float
    subtasks: list[SubtaskMetrics]
    checkpoints: CheckpointMetrics

    def of(self, uid: str) -> tuple[SubtaskMetrics, ...]:
        """The subtasks that run operator ``uid``."""
        return tuple(s for s in self.subtasks if uid in s.uids)

    def operator(self, uid: str) -> tuple[OperatorMetrics, ...]:
        """The records operator ``uid`` took in and sent on, one per subtask."""
        return tuple(o for s in self.subtasks for o in s.operators if o.uid == uid)

    def async_io(self, uid: str) -> tuple[AsyncIoMetrics, ...]:
        """The counters of ``async_map`` operator ``uid``, one per subtask."""
        return tuple(a for s in self.subtasks for a in s.async_io if a.uid == uid)

    def keyed_state(self, uid: str) -> tuple[KeyedStateStatistics, ...]:
        """The statistics of operator ``uid``'s keyed state, one per subtask that keeps any."""
        return tuple(s.keyed_state[uid] for s in self.subtasks if uid in s.keyed_state)

    @property
    def records_buffered(self) -> int:
        """Records held inside the job right now: in channels and in output buffers."""
        return sum(s.input_buffered + s.output_buffered for s in self.subtasks)

    @property
    def channel_capacity(self) -> int:
        """Records all the job's channels can hold together."""
        return sum(s.input_capacity for s in self.subtasks)

    def to_json(self) -> bytes:
        """These metrics as JSON (``dataclasses.asdict``, written by orjson)."""
        return orjson.dumps(dataclasses.asdict(self))
