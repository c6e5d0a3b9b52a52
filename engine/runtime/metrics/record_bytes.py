"""RecordBytes: the bytes of the records a subtask takes in or sends on, from samples ☐.

Inside one process records pass between subtasks by reference: they have no size in bytes
until the data plane frames them for another process, pickled with protocol 5
(``runtime/network/transport/codec.py``). A subtask's ``bytes_in`` and ``bytes_out`` are
that size (Flink's ``numBytesIn`` and ``numBytesOut``). Pickling every batch would cost a
good share of what the engine spends on a small record, so the records are counted where
they already are (a subtask's ``records_in``, a gate's ``records_out``), and a
``RecordBytes`` is handed a batch only when that count reaches its ``next_sample``: the
first batch, then one per ``SAMPLE_EVERY`` records. Every record counts at the mean
pickled size per record of the samples so far: exact for records of one shape, an
estimate otherwise. Between samples the data path pays one comparison per batch.
"""

from __future__ import annotations

import math
import pickle
from typing import Any

__all__ = ["SAMPLE_EVERY", "RecordBytes"]

SAMPLE_EVERY = 65_536
"""Records between two sampled batches: one batch in 128 of the default batch size."""

_PROTOCOL = 5  # the data plane's codec


class RecordBytes:
    """The bytes of the records a caller counts, from the pickled size of sampled batches.

    The caller keeps the count; whenever a batch brings it to ``next_sample`` or beyond,
    it calls ``sample(batch, count)``. Invariants: ``total(count)`` never decreases as the
    count grows; the records before a sample count at the mean size per record of the
    samples before it, those from the sampled batch on at the mean including it. Once a
    sampled batch cannot be pickled (a record of a type pickle refuses), the size is
    unknown: ``total`` is ``None`` from then on, and nothing more is sampled.
    """

    __slots__ = (
        "_folded",
        "_mark",
        "_per_record",
        "_sampled_bytes",
        "_sampled_records",
        "next_sample",
    )

    next_sample: float
    """The count at which the next batch is to be sampled (infinite once the size is unknown)."""

    def __init__(self) -> None:
        self.next_sample = 1  # the first batch
        self._folded = 0.0  # bytes of the records before the mark
        self._mark = 0  # the count before the last sampled batch
        self._per_record: float | None = 0.0
        self._sampled_bytes = 0
        self._sampled_records = 0

    def sample(self, records: list[Any], count: int) -> None:
        """Measure ``records``, the batch that brought the caller's count to ``count``."""
        per_record = self._per_record
        if per_record is None:
            return
        before = count - len(records)
        self._folded += (before - self._mark) * per_record
        self._mark = before
        try:
            size = len(pickle.dumps(records, protocol=_PROTOCOL))
        except Exception:  # a record's own pickling code (user code) must never fail the job
            self._per_record, self.next_sample = None, math.inf
            return
        self._sampled_bytes += size
        self._sampled_records += len(records)
        self._per_record = self._sampled_bytes / self._sampled_records
        self.next_sample = count + SAMPLE_EVERY

    def total(self, count: int) -> int | None:
        """The bytes of the caller's ``count`` records, or ``None`` when they cannot be pickled."""
        per_record = self._per_record
        if per_record is None:
            return None
        return round(self._folded + (count - self._mark) * per_record)

    def __repr__(self) -> str:
        return f"<RecordBytes per_record={self._per_record} next_sample={self.next_sample}>"
