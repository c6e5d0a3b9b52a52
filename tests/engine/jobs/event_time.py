"""Test doubles for the event-time tests: a sink that logs records and watermarks in order,
and partitions read split by split."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.lowlevel

from lockgate.engine import (
    Sink,
    SinkContext,
    SinkWriter,
    Source,
    SourceContext,
    SourceReader,
    SourceSplit,
    SplitRecords,
    Watermark,
)
from tests.engine.jobs.async_io import Changes


class WatermarkLog(Sink[Any]):
    """Logs, per subtask in arrival order, each record and each watermark (as a float).

    Shared by every copy of a job; ``changes`` is notified after each entry.
    """

    def __init__(self, changes: Changes | None = None) -> None:
        self.changes = changes or Changes()
        self.logs: dict[int, list[Any]] = {}

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _LogWriter(self, self.logs.setdefault(context.subtask_index, []))

    def __deepcopy__(self, memo: dict[int, Any]) -> WatermarkLog:
        return self

    def records(self) -> list[Any]:
        """Every record, subtask by subtask."""
        return [e for log in self.logs.values() for e in log if not isinstance(e, Watermark)]

    def watermarks(self, subtask: int = 0) -> list[float]:
        """The watermarks subtask ``subtask`` received, in order."""
        return [e.timestamp for e in self.logs.get(subtask, []) if isinstance(e, Watermark)]

    def late_records(self, event_time: Any = lambda record: record) -> list[Any]:
        """Records that arrived at or below a watermark their subtask had already received."""
        late = []
        for log in self.logs.values():
            watermark = -math.inf
            for entry in log:
                if isinstance(entry, Watermark):
                    watermark = entry.timestamp
                elif event_time(entry) <= watermark:
                    late.append(entry)
        return late

    async def wait_for_watermark(self, at_least: float, subtask: int = 0) -> None:
        """Wait until subtask ``subtask`` received a watermark of ``at_least`` or more."""
        await self.changes.wait_until(lambda: any(w >= at_least for w in self.watermarks(subtask)))


class _LogWriter(SinkWriter[Any]):
    def __init__(self, sink: WatermarkLog, log: list[Any]) -> None:
        self.sink = sink
        self.log = log

    async def write(self, records: list[Any]) -> None:
        self.log.extend(records)
        self.sink.changes.notify()

    async def write_watermark(self, watermark: Watermark) -> None:
        self.log.append(watermark)
        self.sink.changes.notify()


def below(timestamp: float) -> float:
    """The watermark a strategy without out-of-orderness derives from ``timestamp``."""
    return math.nextafter(timestamp, -math.inf)


class Partitions:
    """Partitions a test appends records to while a job reads them; each can be finished.

    Shared by every copy of a job (``deepcopy`` returns it). ``PartitionsSource`` reads them
    by split (one split per partition, ``"p0"``, ``"p1"``, ...), so a watermark strategy
    makes a watermark per partition. Once every partition is finished, readers end.
    """

    def __init__(self, count: int) -> None:
        self.records: list[list[Any]] = [[] for _ in range(count)]
        self.finished: set[int] = set()
        self._changed = anyio.Event()

    def append(self, partition: int, records: list[Any]) -> None:
        """Append ``records`` to ``partition``."""
        self.records[partition] += records
        self._wake()

    def finish(self, partition: int) -> None:
        """Nothing more comes to ``partition``: once read out, it is finished."""
        self.finished.add(partition)
        self._wake()

    async def changed(self) -> None:
        """Wait for the next ``append`` or ``finish``."""
        await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def __deepcopy__(self, memo: dict[int, Any]) -> Partitions:
        return self


class PartitionsSource(Source[Any]):
    """Reads ``Partitions``, each a split whose position is an offset."""

    def __init__(self, partitions: Partitions) -> None:
        self.partitions = partitions

    @property
    def bounded(self) -> bool:
        return False

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(f"p{index}", 0) for index in range(len(self.partitions.records))]

    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[Any]:
        return _PartitionsReader(self.partitions, {s.split_id: s.position for s in splits})


class _PartitionsReader(SourceReader[Any]):
    def __init__(self, partitions: Partitions, offsets: dict[str, int]) -> None:
        self.partitions = partitions
        self.offsets = offsets
        self.told_finished: set[str] = set()

    async def read(self, max_records: int) -> list[Any]:
        while runs := await self.read_splits(max_records):
            if records := [record for run in runs for record in run.records]:
                return records
        return []

    async def read_splits(self, max_records: int) -> list[SplitRecords[Any]]:
        await anyio.lowlevel.checkpoint()
        while True:
            runs = [run for split in self.offsets if (run := self._take(split, max_records))]
            if runs or len(self.told_finished) == len(self.offsets):
                return runs
            await self.partitions.changed()

    def _take(self, split: str, max_records: int) -> SplitRecords[Any] | None:
        index, offset = int(split[1:]), self.offsets[split]
        taken = self.partitions.records[index][offset : offset + max_records]
        self.offsets[split] = offset + len(taken)
        read_out = self.offsets[split] == len(self.partitions.records[index])
        finished = (
            read_out and index in self.partitions.finished and split not in self.told_finished
        )
        if finished:
            self.told_finished.add(split)
        return SplitRecords(split, taken, finished=finished) if taken or finished else None

    def snapshot_splits(self) -> list[SourceSplit]:
        return [SourceSplit(split, offset) for split, offset in self.offsets.items()]
