"""Jobs and doubles for the savepoint tests: an in-memory topic read like a Kafka topic."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from lockgate.engine import Source, SourceContext, SourceReader, SourceSplit


class Topic:
    """An append-only log in partitions; ``TopicSource`` readers resume at offsets.

    Shared by every copy of a job (``deepcopy`` returns it), so a test appends while jobs
    read. A job maps its records through ``passed`` right after the source (in the source's
    subtask): ``all_read`` is set whenever every record appended has passed there, so a
    barrier triggered afterwards follows all of them. (Counting reads would not do: a source
    subtask reads batches ahead of what it emits.) After ``close`` readers that read
    everything end their input.
    """

    def __init__(self, partitions: int) -> None:
        self.partitions: list[list[Any]] = [[] for _ in range(partitions)]
        self.consumed = 0
        self.processed = 0
        self.closed = False
        self.all_read = anyio.Event()
        self._changed = anyio.Event()

    def append(self, records: Sequence[Any], partition_of: Any) -> None:
        """Append ``records``, each to the partition ``partition_of(record)`` names."""
        for record in records:
            self.partitions[partition_of(record) % len(self.partitions)].append(record)
        self.all_read = anyio.Event()
        self._wake()

    def close(self) -> None:
        """Nothing more will be appended: readers end once they read everything."""
        self.closed = True
        self._wake()

    def on_read(self, count: int) -> None:
        """Count records a reader took."""
        self.consumed += count

    @property
    def total(self) -> int:
        """Records appended so far."""
        return sum(len(partition) for partition in self.partitions)

    def passed(self, record: Any) -> Any:
        """Count ``record`` as emitted by its source subtask (a map function); return it."""
        self.processed += 1
        if self.processed >= self.total:
            self.all_read.set()
        return record

    async def changed(self) -> None:
        """Wait for the next ``append`` or ``close``."""
        await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def __deepcopy__(self, memo: dict[int, Any]) -> Topic:
        return self


class TopicSource(Source[Any]):
    """Reads every partition of a ``Topic``; a split is a partition, its position an offset."""

    def __init__(self, topic: Topic) -> None:
        self.topic = topic

    @property
    def bounded(self) -> bool:
        return False

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(str(index), 0) for index in range(len(self.topic.partitions))]

    def create_reader(self, splits: Sequence[SourceSplit], context: SourceContext) -> _Reader:
        return _Reader(self.topic, {split.split_id: split.position for split in splits})


class _Reader(SourceReader[Any]):
    def __init__(self, topic: Topic, offsets: dict[str, int]) -> None:
        self.topic = topic
        self.offsets = offsets

    async def read(self, max_records: int) -> list[Any]:
        await anyio.lowlevel.checkpoint()
        while True:
            batch = self._take(max_records)
            if batch or (self.topic.closed and self._read_out()):
                self.topic.on_read(len(batch))
                return batch
            await self.topic.changed()

    def _take(self, max_records: int) -> list[Any]:
        batch: list[Any] = []
        for split_id, offset in self.offsets.items():
            partition = self.topic.partitions[int(split_id)]
            taken = partition[offset : offset + max_records - len(batch)]
            self.offsets[split_id] = offset + len(taken)
            batch += taken
        return batch

    def _read_out(self) -> bool:
        partitions = self.topic.partitions
        return all(offset == len(partitions[int(s)]) for s, offset in self.offsets.items())

    def snapshot_splits(self) -> list[SourceSplit]:
        return [SourceSplit(split_id, offset) for split_id, offset in self.offsets.items()]


def has_metadata(folder: str | Path) -> bool:
    """Whether ``folder`` holds a snapshot's ``_metadata`` (a sync helper for async tests)."""
    return Path(folder, "_metadata").is_file()


def exists(path: str | Path) -> bool:
    """Whether ``path`` exists (a sync helper for async tests)."""
    return Path(path).exists()
