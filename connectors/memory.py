"""In-memory connectors: a replayable collection source, a collecting sink, a printing sink."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

import anyio

from lockgate.connectors.errors import InvalidSplit
from lockgate.engine import TypeCodec
from lockgate.engine.io.driver_side import DriverSide, on_driver
from lockgate.engine.io.record_chunks import pickled_in_chunks, unpickled_chunks
from lockgate.engine.io.sinks import (
    Sink,
    SinkContext,
    SinkWriter,
    TwoPhaseCommitSink,
    TwoPhaseCommitWriter,
)
from lockgate.engine.io.sources import (
    Source,
    SourceContext,
    SourceProgress,
    SourceReader,
    SourceSplit,
)
from lockgate.engine.io.young_generation import YOUNG_GENERATION
from lockgate.engine.testing import AwaitCheckpoint, FailOnce, sentinels_made

__all__ = ["CollectSink", "CollectTransaction", "CollectionSource", "PrintSink"]

T = TypeVar("T")


class CollectionSource(Source[T]):
    """A bounded source over the elements of a collection, replayable by position.

    Every element is read exactly once across all subtasks, in collection order within a
    split. The input is divided into up to ``parallelism`` contiguous index ranges; a split's
    position is the plain data ``{"next": <next index>, "end": <range end>}``, so a reader
    built from snapshotted splits resumes exactly after the last record returned.

    A ``Sequence`` (a list, a tuple, a ``range``) is read in place, never copied: streaming
    ``range(10**9)`` needs no memory for the elements. Any other iterable is materialised
    into a list once, when the source is built. Do not mutate a sequence while a job reads it.

    Failure sentinels (``lockgate.engine.testing.FailOnce``) in a list, a tuple or any other
    iterable (not in a ``range`` or other sequences, which are never scanned) make a reader
    raise ``InjectedFailure`` on reaching an unfired one, after returning the records before
    it, and skip it once fired. At an ``AwaitCheckpoint`` sentinel a reader waits until a
    checkpoint completes. A sentinel takes a position like any element, so replaying from a
    snapshot reads exactly the records after it, each once.
    """

    def __init__(self, elements: Iterable[T | FailOnce | AwaitCheckpoint]) -> None:
        self._elements: Sequence[T | FailOnce | AwaitCheckpoint] = (
            elements if isinstance(elements, Sequence) else list(elements)
        )
        self._has_sentinels = _holds_sentinels(self._elements)
        self._readers: dict[int, _CollectionReader[Any]] = {}

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        """Return ``parallelism`` contiguous ranges, fewer if there are fewer elements.

        There is always at least one split, even for an empty collection.
        """
        if parallelism < 1:
            raise ValueError(f"parallelism must be at least 1; got {parallelism}")
        size = len(self._elements)
        count = max(1, min(parallelism, size))
        bounds = [index * size // count for index in range(count + 1)]
        return [_range_split(i, bounds[i], bounds[i + 1]) for i in range(count)]

    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[T]:
        """Return a reader that reads ``splits`` in order, each from its position."""
        size = len(self._elements)
        cursors = [_RangeCursor.from_split(split, size, context) for split in splits]
        elements = cast(Sequence[T], self._elements)
        reader_type = _SentinelCollectionReader if self._has_sentinels else _CollectionReader
        reader: _CollectionReader[T] = reader_type(elements, cursors)
        self._readers[context.subtask_index] = reader
        return reader

    def progress(self) -> SourceProgress:
        """The elements the latest reader of each subtask has read, of all the elements."""
        total = len(self._elements)
        left = sum(reader.remaining for reader in self._readers.values())
        return SourceProgress(total - left if self._readers else 0, total, "records")

    def __repr__(self) -> str:
        sentinels = " with failure sentinels" if self._has_sentinels else ""
        return f"<CollectionSource elements={len(self._elements)}{sentinels}>"


_SENTINEL_TYPES = frozenset({FailOnce, AwaitCheckpoint})


def _holds_sentinels(elements: Sequence[Any]) -> bool:
    # Only lists and tuples are scanned: a range cannot hold a sentinel, and indexing a
    # custom sequence element by element could be slow or lazy. A process that never made
    # a sentinel (a job's, not a test's) scans nothing.
    if not sentinels_made() or not isinstance(elements, list | tuple):
        return False
    # map(type, ...) runs in C: about 15 ns an element, against 75 for an isinstance() loop.
    return not _SENTINEL_TYPES.isdisjoint(map(type, elements))


def _range_split(index: int, start: int, end: int) -> SourceSplit:
    return SourceSplit(split_id=str(index), position={"next": start, "end": end})


@dataclass(slots=True)
class _RangeCursor:
    """How far a reader got in one index range of the collection."""

    split_id: str
    next: int
    end: int

    @classmethod
    def from_split(cls, split: SourceSplit, size: int, context: SourceContext) -> _RangeCursor:
        position = split.position
        if not _is_range_position(position, size):
            raise InvalidSplit(
                f"collection source '{context.uid}' (subtask {context.subtask_index + 1}/"
                f"{context.parallelism}) cannot resume split '{split.split_id}' from position "
                f"{position!r}: expected {{'next': i, 'end': j}} with 0 <= i <= j <= {size}; "
                "restore from a checkpoint of this same source and collection"
            )
        return cls(split.split_id, position["next"], position["end"])

    def to_split(self) -> SourceSplit:
        return SourceSplit(split_id=self.split_id, position={"next": self.next, "end": self.end})


def _is_range_position(position: Any, size: int) -> bool:
    if not isinstance(position, dict) or set(position) != {"next", "end"}:
        return False
    start, end = position["next"], position["end"]
    return _is_index(start) and _is_index(end) and 0 <= start <= end <= size


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _CollectionReader(SourceReader[T]):
    """Reads its ranges in order by slicing: a read costs one slice, nothing per element."""

    def __init__(self, elements: Sequence[T], cursors: list[_RangeCursor]) -> None:
        self._elements = elements
        self._cursors = cursors
        self._current = 0

    async def read(self, max_records: int) -> list[T]:
        """Return the next up to ``max_records`` elements of the current range; ``[]`` at end."""
        if max_records < 1:
            raise ValueError(f"max_records must be at least 1; got {max_records}")
        # Reading never waits, and does not yield either: the subtask's fetch task yields,
        # and is cancelled, once it holds the batches it may read ahead.
        cursor = self._unfinished_cursor()
        if cursor is None:
            return []
        stop = min(cursor.end, cursor.next + max_records)
        batch = self._elements[cursor.next : stop]  # a list's slice is a new list already
        cursor.next = stop
        return batch if type(batch) is list else list(batch)

    def snapshot_splits(self) -> list[SourceSplit]:
        """Return every assigned range with the index after the last element returned."""
        return [cursor.to_split() for cursor in self._cursors]

    @property
    def remaining(self) -> int:
        """How many elements of its ranges it has not returned yet."""
        return sum(cursor.end - cursor.next for cursor in self._cursors)

    def _unfinished_cursor(self) -> _RangeCursor | None:
        while self._current < len(self._cursors):
            cursor = self._cursors[self._current]
            if cursor.next < cursor.end:
                return cursor
            self._current += 1
        return None

    def __repr__(self) -> str:
        ranges = ", ".join(f"{c.split_id}@{c.next}/{c.end}" for c in self._cursors)
        return f"<CollectionSourceReader [{ranges}]>"


class _SentinelCollectionReader(_CollectionReader[T]):
    """Reads like ``_CollectionReader`` but stops at sentinels.

    An unfired ``FailOnce`` ends a batch; reaching it first fires it. An unpassed
    ``AwaitCheckpoint`` ends a batch; reaching it first waits for a checkpoint to complete.
    Passed sentinels are skipped. Sentinels take positions like records, so snapshots replay
    exactly.
    """

    def __init__(self, elements: Sequence[T], cursors: list[_RangeCursor]) -> None:
        super().__init__(elements, cursors)
        self._checkpoint_completed: anyio.Event | None = None

    async def read(self, max_records: int) -> list[T]:
        """Return the next up to ``max_records`` records; handle a sentinel reached first."""
        if max_records < 1:
            raise ValueError(f"max_records must be at least 1; got {max_records}")
        while (cursor := self._unfinished_cursor()) is not None:
            element: Any = self._elements[cursor.next]
            if isinstance(element, AwaitCheckpoint) and not element.passed:
                await self._wait_for_checkpoint()
                element.passed = True
            if records := self._read_from(cursor, max_records):
                return records
        return []

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Release a read waiting at an ``AwaitCheckpoint`` sentinel."""
        if self._checkpoint_completed is not None:
            self._checkpoint_completed.set()

    async def _wait_for_checkpoint(self) -> None:
        self._checkpoint_completed = anyio.Event()
        try:
            await self._checkpoint_completed.wait()
        finally:
            self._checkpoint_completed = None

    def _read_from(self, cursor: _RangeCursor, max_records: int) -> list[T]:
        # Returns [] only after skipping passed sentinels; an unfired FailOnce raises when first.
        records: list[T] = []
        for element in self._elements[cursor.next : min(cursor.end, cursor.next + max_records)]:
            if _blocks(element):
                if not records and isinstance(element, FailOnce):
                    element.maybe_fire()
                break
            cursor.next += 1
            if not isinstance(element, FailOnce | AwaitCheckpoint):
                records.append(element)
        return records


def _blocks(element: Any) -> bool:
    if isinstance(element, FailOnce):
        return not element.fired
    return isinstance(element, AwaitCheckpoint) and not element.passed


class PrintSink(Sink[Any]):
    """A sink that prints every record on standard output, one line each, as Flink's does.

    With parallelism above one each line starts with the subtask's number, counted from 1:
    ``"2> record"``; a ``prefix`` comes first: ``"sums:2> record"``, or ``"sums> record"`` at
    parallelism one. Printing blocks the event loop: use it to debug, not in production.
    """

    def __init__(self, prefix: str = "") -> None:
        self._prefix = prefix

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        """Return a writer that prints each record behind this subtask's line prefix."""
        return _PrintWriter(_line_prefix(self._prefix, context))

    def __repr__(self) -> str:
        return f"<PrintSink prefix={self._prefix!r}>"


def _line_prefix(prefix: str, context: SinkContext) -> str:
    if context.parallelism > 1:
        number = str(context.subtask_index + 1)
        prefix = f"{prefix}:{number}" if prefix else number
    return f"{prefix}> " if prefix else ""


class _PrintWriter(SinkWriter[Any]):
    def __init__(self, line_prefix: str) -> None:
        self._line_prefix = line_prefix

    async def write(self, records: list[Any]) -> None:
        for record in records:
            print(f"{self._line_prefix}{record}")


@dataclass
class CollectTransaction(Generic[T]):
    """The records one subtask wrote between two checkpoints, under a fenced id.

    Records are added while it is open; once pre-committed it never changes. It pickles its
    records in chunks (``record_chunks``), so that a checkpoint encoding millions of them in
    a worker thread lets the event loop run between chunks.
    """

    transaction_id: str
    records: list[T] = field(default_factory=list)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_collect_transaction, (self.transaction_id, pickled_in_chunks(self.records)))


def _collect_transaction(transaction_id: str, chunks: tuple[bytes, ...]) -> CollectTransaction[Any]:
    return CollectTransaction(transaction_id, unpickled_chunks(chunks))


class CollectSink(TwoPhaseCommitSink[T, CollectTransaction[T]], DriverSide):
    """Keeps in ``results`` the records that completed checkpoints committed.

    Exactly-once: records become visible only when the checkpoint after them completes (for
    a bounded job, at the latest with its final checkpoint), in commit order, each subtask's
    records in the order it wrote them. A commit is idempotent, so a transaction recovered
    from a checkpoint after a restart is never added twice. The sink object is the "external
    system": keep using the same object across restarts and restores to see one history.
    Under every executor the records reach this object (a worker commits through it:
    ``DriverSide``). While its writers run, young garbage collections run less often
    (``lockgate.engine.io.young_generation``): each would walk the records kept since.
    """

    driver_only = ("_results", "_committed")

    def __init__(self) -> None:
        self._results: list[T] = []
        self._committed: set[str] = set()
        self._counter = itertools.count()

    @property
    def results(self) -> list[T]:
        """The records of committed transactions, in commit order."""
        return self._results

    def state_types(self) -> Sequence[TypeCodec]:
        """Savepoints store transactions as their id and records."""
        return (TypeCodec.for_dataclass(CollectTransaction, "lockgate.CollectTransaction"),)

    def create_writer(self, context: SinkContext) -> TwoPhaseCommitWriter[T, CollectTransaction[T]]:
        """A writer that holds the young generation's threshold up from open to close."""
        return _KeepingWriter(self, context)

    def clear(self) -> None:
        """Forget every committed record."""
        self._results.clear()

    async def begin_transaction(self, context: SinkContext) -> CollectTransaction[T]:
        """Open a transaction fenced by job, run, attempt, subtask and a counter."""
        fence = f"{context.job_name}/{context.run_id}/{context.attempt}/{context.subtask_index}"
        return CollectTransaction(f"{fence}/{next(self._counter)}")

    async def write(self, txn: CollectTransaction[T], records: list[T]) -> None:
        """Buffer records in the transaction."""
        txn.records.extend(records)

    async def pre_commit(self, txn: CollectTransaction[T]) -> None:
        """Nothing to flush: the records are in the transaction."""

    def transaction_size(self, txn: CollectTransaction[T]) -> int:
        """The transaction holds its records: checkpoints encode every one of them."""
        return len(txn.records)

    @on_driver
    async def commit(self, txn: CollectTransaction[T]) -> None:
        """Make the transaction's records visible, once (in the driving process)."""
        if txn.transaction_id not in self._committed:
            self._committed.add(txn.transaction_id)
            self._results.extend(txn.records)

    async def abort(self, txn: CollectTransaction[T]) -> None:
        """Drop the transaction's records."""
        txn.records.clear()

    def __repr__(self) -> str:
        return f"<CollectSink results={len(self._results)}>"


class _KeepingWriter(TwoPhaseCommitWriter[T, CollectTransaction[T]]):
    """A ``CollectSink`` writer: young collections run rarely while it keeps records."""

    _holding = False

    async def open(self) -> None:
        YOUNG_GENERATION.hold()
        self._holding = True
        try:
            await super().open()
        except BaseException:
            self._release()
            raise

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            self._release()

    def _release(self) -> None:
        if self._holding:
            self._holding = False
            YOUNG_GENERATION.release()
