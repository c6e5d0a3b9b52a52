"""OperatorPipeline: how a batch runs through a subtask's chain to its tail."""

from __future__ import annotations

from typing import Any

from lockgate.connectors import CollectionSource
from lockgate.engine import Sink, SinkContext, SinkWriter, StreamEnvironment
from lockgate.engine.runtime.subtask.pipeline import FAN_OUT_CHUNK


class WriteSizes(Sink[Any]):
    """Records how many records each write brought, and the records."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.records: list[Any] = []

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return _SizesWriter(self)


class _SizesWriter(SinkWriter[Any]):
    def __init__(self, sink: WriteSizes) -> None:
        self._sink = sink

    async def write(self, records: list[Any]) -> None:
        self._sink.sizes.append(len(records))
        self._sink.records += records


async def test_a_batch_fanned_out_tenfold_reaches_the_tail_in_chunks_near_the_batch_size():
    # 512 lines of 10 words: 5,120 records from one batch, in cache-sized chunks.
    sink = WriteSizes()
    env = StreamEnvironment(batch_size=512)
    lines = [" ".join(f"w{line}.{word}" for word in range(10)) for line in range(512)]
    env.from_source(CollectionSource(lines)).flat_map(str.split).sink_to(sink)

    await env.execute("fan-out")

    assert sink.records == [word for line in lines for word in line.split()]
    assert max(sink.sizes) < FAN_OUT_CHUNK + 10 <= 2 * 512 + 10  # cut after a line's words
