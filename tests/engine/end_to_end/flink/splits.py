"""A source of several splits read by one subtask, as the per-split scenarios describe it.

Flink's side (ScriptedSource.java) reads the records in the scenario's order through the
output of each record's split, and marks the idle splits idle before the first record.
This is the same source for lockgate: its reader returns each record as a run of its split
(``SourceReader.read_splits``) and names the idle splits (``SourceReader.idle_splits``).
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from lockgate.engine import Source, SourceContext, SourceReader, SourceSplit, SplitRecords
from tests.engine.end_to_end.flink.functions import Event


class ScriptedSplitsSource(Source[Event]):
    """Splits by name; one reader returns the records one per read, in the scenario's order.

    A record's tag names its split. A split's position is how many of all records were read.
    """

    def __init__(self, records: list[Event], splits: list[str], idle: list[str]) -> None:
        self.records = records
        self.splits = splits
        self.idle = set(idle)

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(name, 0) for name in self.splits]

    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[Event]:
        return ScriptedSplitsReader(self.records, [s.split_id for s in splits], self.idle)


class ScriptedSplitsReader(SourceReader[Event]):
    """Reads the records in order; says which split each came from and which are idle."""

    def __init__(self, records: list[Event], splits: list[str], idle: set[str]) -> None:
        self.records = records
        self.splits = splits
        self.idle = idle
        self.next = 0

    async def read(self, max_records: int) -> list[Event]:
        return [record for run in await self.read_splits(max_records) for record in run.records]

    async def read_splits(self, max_records: int) -> list[SplitRecords[Event]]:
        await anyio.lowlevel.checkpoint()
        if self.next >= len(self.records):
            return []
        self.next += 1
        record = self.records[self.next - 1]
        return [SplitRecords(self.split_of(record), [record])]

    def split_of(self, record: Event) -> str:
        """The split ``record`` was read from."""
        return record.tag or self.splits[0]

    def idle_splits(self) -> set[str]:
        """The splits with nothing to read, idle from the start."""
        return self.idle & set(self.splits)

    def snapshot_splits(self) -> list[SourceSplit]:
        return [SourceSplit(name, self.next) for name in self.splits]
