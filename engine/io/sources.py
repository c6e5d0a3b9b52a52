"""Source and SourceReader: how records enter a job, and how a source resumes.

A source divides its input into splits (a file, a range of a collection, a stream partition).
Each split carries the position reached in it; positions are plain JSON data (str, int,
float, bool, None, lists and dicts of them), so that checkpoints and savepoints can store them
without pickling. At the first start the engine asks the source for its splits and hands
every subtask the splits whose index modulo the parallelism equals its own index. A reader
reports, at any moment, each split's position just after the last record it returned; on
restore the engine gives readers those splits back and reading resumes exactly there.

At a checkpoint the engine hands the reader the positions it is about to store
(``SourceReader.checkpoint_splits``): the reader learns which positions checkpoint n covers,
so that ``notify_checkpoint_complete(n)`` can release what it held for them.

For per-split watermarks a reader tells which split each record came from: it overrides
``read_splits``, which returns the records as ``SplitRecords``, one split's run each, and
may say which splits are idle (``idle_splits``). A reader that does not is one input for
the watermarks of its subtask.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lockgate.engine.time.clock import Clock

if TYPE_CHECKING:
    from lockgate.engine.savepoints.type_codec import TypeCodec

__all__ = [
    "Source",
    "SourceContext",
    "SourceProgress",
    "SourceReader",
    "SourceSplit",
    "SplitRecords",
    "assign_splits",
    "reads_by_split",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SourceSplit:
    """A part of a source's input and the position reached in it.

    The position is plain JSON data, so checkpoints store it without pickling; a restore hands
    the split, with this position, to whichever subtask reads it next.
    """

    split_id: str
    position: Any


@dataclass(frozen=True, slots=True)
class SplitRecords(Generic[T]):
    """Records a read took from one split, in the split's order.

    ``finished``: the split has nothing after these (it may hold no records then): it stops
    holding back its subtask's watermark. ``split_id`` ``None`` stands for all the reader's
    splits as one (what the default ``read_splits`` returns).
    """

    split_id: str | None
    records: list[T]
    finished: bool = False


@dataclass(frozen=True, slots=True)
class SourceContext:
    """Where a reader runs: its operator, subtask and clock, and whether the job checkpoints.

    Readers read time only through ``clock``, so simulations and tests can drive them.
    ``checkpointing`` is ``False`` when the job did not enable checkpointing: a source that
    holds records in memory until a completed checkpoint covers them need not hold them then.
    """

    uid: str
    subtask_index: int
    parallelism: int
    clock: Clock
    checkpointing: bool = True


@dataclass(frozen=True, slots=True)
class SourceProgress:
    """How much of a bounded input a source's readers have read: ``done`` of ``total`` units.

    ``unit`` names what is counted (``"records"``, ``"bytes"``); ``0 <= done <= total``. It
    counts what the readers returned, batches ahead of what the job has processed, and only
    the readers of this process.
    """

    done: int
    total: int
    unit: str

    @property
    def fraction(self) -> float:
        """``done / total``, 1.0 for an empty input."""
        return self.done / self.total if self.total else 1.0


class SourceReader(ABC, Generic[T]):
    """Reads the splits assigned to one subtask.

    ``read`` is called by one task at a time. ``snapshot_splits`` may be called between two
    reads and must describe exactly the records returned so far: replaying from those
    positions yields the records after them, each once.
    """

    async def open(self) -> None:
        """Acquire resources before the first read."""

    @abstractmethod
    async def read(self, max_records: int) -> list[T]:
        """Return 1 to ``max_records`` next records, waiting for some; ``[]`` once all ended."""

    async def read_splits(self, max_records: int) -> list[SplitRecords[T]]:
        """``read``, its records in runs by the split each came from; ``[]`` once all ended.

        Flink's per-split ``SourceOutput``: a reader that overrides this gives each of its
        splits its own watermark generator, and the subtask's watermark is the minimum over
        the splits that are active and not finished. In all, 1 to ``max_records`` records,
        waiting for some; a run without records only to say its split ``finished``. The
        engine calls it instead of ``read`` where watermarks are made per split; the
        default is ``read``'s records as one run of all the reader's splits.
        """
        records = await self.read(max_records)
        return [SplitRecords(None, records)] if records else []

    def idle_splits(self) -> Collection[str]:
        """The splits with nothing to read now (an empty partition); by default none.

        Flink's ``SourceOutput.markIdle``. Asked after each ``read_splits``, for the batch
        it returned (and counted from its first record on): an idle split does not hold its
        subtask's watermark back, until it is no longer named here or its records bring a
        watermark. Keep it fast.
        """
        return ()

    @abstractmethod
    def snapshot_splits(self) -> list[SourceSplit]:
        """Return every assigned split with the position after the last record returned."""

    def checkpoint_splits(self, checkpoint_id: int, splits: list[SourceSplit]) -> list[SourceSplit]:
        """Return the splits checkpoint ``checkpoint_id`` stores; by default ``splits``.

        Flink's ``SourceReader.snapshotState``. Called in the synchronous part of the
        subtask's snapshot, before ``notify_checkpoint_complete(checkpoint_id)`` can come.
        ``splits`` is what ``snapshot_splits`` returned after the last batch the subtask
        delivered before the barrier: the reader may have read further since (the engine
        reads batches ahead). A reader that must know which positions a checkpoint covers
        remembers them here; one that keeps more than positions adds it to these splits. The
        positions returned must describe the same records as ``splits``. Keep it fast: the
        subtask processes nothing meanwhile.
        """
        return splits

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` is complete (e.g. acknowledge input up to it)."""

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` will never complete."""

    async def close(self) -> None:
        """Release resources; called once, also after a failure."""


class Source(ABC, Generic[T]):
    """Where a job's records come from: splits of input and readers for them.

    A source is replayable when its readers resume exactly from the split positions a
    checkpoint recorded; then every record is reflected once in the job's state.
    """

    @property
    def bounded(self) -> bool:
        """Whether the input ends; an unbounded source's readers never return ``[]``."""
        return True

    async def discover_splits(self) -> None:
        """Look up, on the job's event loop, what ``create_splits`` needs; by default nothing.

        A job awaits it before ``create_splits`` whenever it builds the source's splits
        afresh (not when it restores them from a checkpoint). A source that must ask a
        server for its partitions asks here, with async I/O, so that ``create_splits`` stays
        synchronous and never blocks the event loop.
        """

    @abstractmethod
    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        """Divide the input into splits at their start positions, for a first run."""

    @abstractmethod
    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[T]:
        """Return a reader for ``splits``, which it resumes from their positions."""

    def state_types(self) -> Sequence[TypeCodec]:
        """The types in split positions beyond plain data, for savepoints (see ``Sink``)."""
        return ()

    def progress(self) -> SourceProgress | None:
        """How far the readers of this source got through its input; ``None`` if unknown.

        For progress bars (``lockgate run``): a bounded source that knows its size answers
        what its latest reader of each subtask has read so far (``CollectionSource`` in
        records, ``FileSource`` in bytes). The default knows nothing.
        """
        return None


def reads_by_split(reader: SourceReader[Any]) -> bool:
    """Whether ``reader`` tells which split each record came from (overrides ``read_splits``)."""
    return type(reader).read_splits is not SourceReader.read_splits


def assign_splits(
    splits: Sequence[SourceSplit], subtask_index: int, parallelism: int
) -> list[SourceSplit]:
    """Return the splits a subtask reads: those whose index modulo parallelism is its own."""
    return list(splits[subtask_index::parallelism])
