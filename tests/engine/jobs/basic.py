"""Small jobs and test doubles shared by the engine's runtime tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import anyio

from lockgate.engine import (
    Sink,
    SinkContext,
    SinkWriter,
    Source,
    SourceContext,
    SourceReader,
    SourceSplit,
)


class CallbackSink(Sink[Any]):
    """A sink whose writers hand every batch to a callback, then optionally yield."""

    def __init__(self, on_write: Callable[[SinkContext, list[Any]], None], *, pause: float = 0.0):
        self.on_write = on_write
        self.pause = pause

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _CallbackWriter(self, context)


class _CallbackWriter(SinkWriter[Any]):
    def __init__(self, sink: CallbackSink, context: SinkContext) -> None:
        self.sink = sink
        self.context = context

    async def write(self, records: list[Any]) -> None:
        self.sink.on_write(self.context, records)
        if self.sink.pause:
            await anyio.sleep(self.sink.pause)


def final_values(pairs: list[tuple[Any, int]]) -> dict[Any, int]:
    """The last running value per key of a keyed running aggregate (values only grow)."""
    final: dict[Any, int] = {}
    for key, value in pairs:
        final[key] = max(final.get(key, value), value)
    return final


class EndlessSource(Source[int]):
    """Counts up forever, one batch per read, yielding to the event loop between reads."""

    @property
    def bounded(self) -> bool:
        return False

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(str(i), i) for i in range(parallelism)]

    def create_reader(self, splits: Sequence[SourceSplit], context: SourceContext) -> _Endless:
        return _Endless(list(splits))


class _Endless(SourceReader[int]):
    def __init__(self, splits: list[SourceSplit]) -> None:
        self.next = {split.split_id: split.position for split in splits}

    async def read(self, max_records: int) -> list[int]:
        await anyio.lowlevel.checkpoint()
        split_id, start = next(iter(self.next.items()))
        self.next[split_id] = start + max_records
        return list(range(start, start + max_records))

    def snapshot_splits(self) -> list[SourceSplit]:
        return [SourceSplit(k, v) for k, v in self.next.items()]
