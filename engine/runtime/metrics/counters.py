"""SubtaskCounters: what a subtask counts as it runs, read at one moment of the job's clock.

Cumulative since the subtask started: the job's ``MetricsView`` turns successive readings
into per-second rates. Reading costs no clock read on the data path: the subtask reads its
clock once per wait (for input, or for room downstream), never per record.
"""

from __future__ import annotations

from dataclasses import dataclass

from lockgate.engine.runtime.metrics.model import AsyncIoMetrics
from lockgate.engine.state.backend import KeyedStateStatistics

__all__ = ["OperatorCounters", "SubtaskCounters", "subtask_key"]


@dataclass(frozen=True, slots=True)
class OperatorCounters:
    """One operator of a chain in one subtask: the records it took in and sent on.

    Its main output only (side outputs are counted by tag). A source takes in the records
    it reads and sends them on; a sink takes in the records it writes and counts them as
    sent on too, as the subtask's ``records_out`` does.
    """

    uid: str
    records_in: int
    records_out: int


@dataclass(frozen=True, slots=True)
class SubtaskCounters:
    """One subtask's counters at ``now`` (the job's clock), since it started at ``started``.

    ``idle_time`` and ``backpressured_time`` count the wait going on as far as it went;
    ``busy_time`` is the rest of the time since the start. Watermarks are ``-inf`` before
    the first and ``inf`` once the input ended; ``split_watermarks`` (``None`` while a split
    is idle) and ``alignment_drift`` only of source subtasks that make or align them.
    ``bytes_in`` and ``bytes_out`` are the pickled size of the records ``records_in`` and
    ``records_out`` count (``RecordBytes``), ``None`` when they cannot be pickled;
    ``operators`` holds the chain's operators in order.
    """

    chain_id: int
    chain: str
    uids: tuple[str, ...]
    subtask_index: int
    parallelism: int
    started: float
    now: float
    finished: bool
    records_in: int
    records_out: int
    bytes_in: int | None
    bytes_out: int | None
    operators: tuple[OperatorCounters, ...]
    idle_time: float
    backpressured_time: float
    input_buffered: int
    input_capacity: int
    output_buffered: int
    output_fill: float
    input_watermark: float
    output_watermark: float
    alignment_drift: float | None
    split_watermarks: dict[str, float | None]
    late_records_dropped: dict[str, int]
    side_output_records: dict[str, int]
    async_io: tuple[AsyncIoMetrics, ...]
    keyed_state: dict[str, KeyedStateStatistics]

    @property
    def busy_time(self) -> float:
        """Seconds neither idle nor backpressured since the start."""
        return max(0.0, self.now - self.started - self.idle_time - self.backpressured_time)

    @property
    def key(self) -> str:
        """The subtask's name in maps: its chain's first uid, ``#``, its index."""
        return subtask_key(self.uids[0], self.subtask_index)


def subtask_key(head_uid: str, subtask_index: int) -> str:
    """``"<uid of the chain's first operator>#<subtask index>"``: a subtask's key."""
    return f"{head_uid}#{subtask_index}"
