"""Record chunks: how a transaction that holds its records pickles them into a checkpoint.

A checkpoint is encoded in a worker thread, but one ``pickle.dumps`` runs in C and holds the
GIL until it returns: a transaction pickling a million buffered records in one call would
stall the event loop for the whole encoding, as a million keys pickled at once would (keyed
state is pickled one key group at a time for the same reason). Pickled in chunks of
``CHUNK_RECORDS``, each call is short, and the loop takes the GIL between two of them. A
chunk's memo is small too, which makes pickling several times faster than one memo for all.

A transaction type uses it from ``__reduce__``::

    def __reduce__(self):
        return (_rebuilt, (self.transaction_id, pickled_in_chunks(self.records)))

Records are pickled independently per chunk: two records that are the same object come
back as equal, separate objects when they sit in different chunks.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["CHUNK_RECORDS", "pickled_in_chunks", "unpickled_chunks"]

CHUNK_RECORDS = 2_000
"""Records per chunk: a chunk of small records pickles in about a millisecond."""


def pickled_in_chunks(records: Sequence[Any]) -> tuple[bytes, ...]:
    """Return ``records`` pickled (protocol 5) ``CHUNK_RECORDS`` at a time, in order."""
    return tuple(
        pickle.dumps(records[start : start + CHUNK_RECORDS], protocol=5)
        for start in range(0, len(records), CHUNK_RECORDS)
    )


def unpickled_chunks(chunks: Iterable[bytes]) -> list[Any]:
    """Return the records of ``pickled_in_chunks``, in order, as one list."""
    records: list[Any] = []
    for chunk in chunks:
        records.extend(pickle.loads(chunk))
    return records
