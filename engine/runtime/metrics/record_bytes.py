"""RecordBytes: the bytes of the records a subtask takes in or sends on, from samples ☐.

Inside one process records pass between subtasks by reference: they have no size in bytes
until the data plane frames them for another process, pickled with protocol 5
(``runtime/network/transport/codec.py``). A subtask's ``bytes_in`` and ``bytes_out`` are
that size (Flink's ``numBytesIn`` and ``numBytesOut``). Pickling every batch would cost a
good share of what the engine spends on a small record, so a ``RecordBytes`` pickles
the first batch it counts and then one in every ``SAMPLE_EVERY``, and counts each batch at
the mean size per record of the samples so far: exact for records of one size, an
estimate otherwise, and never a clock read or a pickle on the other batches.
"""

from __future__ import annotations

import pickle
from typing import Any

__all__ = ["SAMPLE_EVERY", "RecordBytes"]

SAMPLE_EVERY = 256
"""One batch in this many is pickled to learn its records' size; the first always is."""

_PROTOCOL = 5  # the data plane's codec


class RecordBytes:
    """Counts the bytes of batches of records, estimated from the pickled size of samples.

    Invariants: ``total`` never decreases; a batch counts ``len(batch)`` times the mean
    pickled bytes per record of the sampled batches (itself included when sampled); empty
    batches count nothing and are never sampled. Once a sampled batch cannot be pickled
    (a record of a type pickle refuses), the size is unknown: ``total`` is ``None`` from
    then on, and nothing more is pickled.
    """

    __slots__ = ("_batches", "_per_record", "_sampled_bytes", "_sampled_records", "_total")

    def __init__(self) -> None:
        self._batches = 0
        self._per_record = 0.0
        self._sampled_bytes = 0
        self._sampled_records = 0
        self._total: float | None = 0.0

    def count(self, records: list[Any]) -> None:
        """Count a batch of records (sampled when its turn has come)."""
        total = self._total
        if not records or total is None:
            return
        if not self._batches % SAMPLE_EVERY and not self._sample(records):
            self._total = None
            return
        self._batches += 1
        self._total = total + len(records) * self._per_record

    @property
    def total(self) -> int | None:
        """The bytes counted so far, or ``None`` when the records cannot be pickled."""
        return None if self._total is None else round(self._total)

    def _sample(self, records: list[Any]) -> bool:
        try:
            size = len(pickle.dumps(records, protocol=_PROTOCOL))
        except Exception:  # a record's own pickling code (user code) must never fail the job
            return False
        self._sampled_bytes += size
        self._sampled_records += len(records)
        self._per_record = self._sampled_bytes / self._sampled_records
        return True

    def __repr__(self) -> str:
        return f"<RecordBytes total={self.total} per_record={self._per_record:.1f}>"
