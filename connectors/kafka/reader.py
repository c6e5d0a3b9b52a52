"""The reader of a KafkaSource: its partitions with one consumer, assigned and sought by hand."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio

from lockgate.connectors.errors import ConnectorError
from lockgate.connectors.kafka.client import (
    _REQUEST_TIMEOUT_S,
    AIOKafkaConsumer,
    TopicPartition,
    _started,
)
from lockgate.connectors.kafka.record import KafkaRecord, kafka_record
from lockgate.engine.io.sources import SourceReader, SourceSplit, SplitRecords

__all__ = ["Decoder", "PartitionCursor", "PartitionReader", "new_consumer"]

T = TypeVar("T")

Decoder = Callable[[KafkaRecord], T]

# How long a read waits in one fetch before asking again; cancelling interrupts it at once.
_POLL_MS = 1000
# How often a bounded reader looks whether the first fetch told each partition's end.
_END_POLL_S = 0.005
# How long the broker holds a fetch that finds nothing new (aiokafka's default, and bounded).
_FETCH_WAIT_MS = 500
_BOUNDED_FETCH_WAIT_MS = 20


def new_consumer(bootstrap: str, *, fetch_wait_ms: int = _FETCH_WAIT_MS) -> Any:
    """A consumer of no group that commits nothing: positions live in checkpoints."""
    return AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",  # where a position deleted by retention resumes
        request_timeout_ms=int(_REQUEST_TIMEOUT_S * 1000),
        fetch_max_wait_ms=fetch_wait_ms,
    )


@dataclass(slots=True)
class PartitionCursor:
    """How far a reader got in one partition."""

    topic: str
    partition: int
    offset: int
    end: int | None

    @property
    def tp(self) -> Any:
        """The partition, as aiokafka names it."""
        return TopicPartition(self.topic, self.partition)

    @property
    def ended(self) -> bool:
        """Whether the reader got to the partition's end (a bounded read)."""
        return self.end is not None and self.offset >= self.end

    @property
    def split_id(self) -> str:
        """The split's id: ``<topic>:<partition>``."""
        return f"{self.topic}:{self.partition}"

    def to_split(self) -> SourceSplit:
        """The split at the offset reached."""
        return SourceSplit(self.split_id, {"offset": self.offset, "end": self.end})


class PartitionReader(SourceReader[T]):
    """Reads its partitions with one consumer, assigned and positioned by hand."""

    def __init__(
        self,
        bootstrap: str,
        decode: Decoder[T],
        cursors: list[PartitionCursor],
        *,
        bounded: bool,
    ) -> None:
        self._bootstrap = bootstrap
        self._decode = decode
        self._cursors = cursors
        self._bounded = bounded
        self._consumer: Any = None
        self._told_finished: set[str] = set()

    async def open(self) -> None:
        """Connect and seek each partition; a bounded reader fixes the ends it lacks."""
        if not self._cursors:
            return
        # A fetch of a partition with nothing new waits this long for a record: short when
        # bounded, where such an answer only tells the end of a caught-up partition.
        fetch_wait_ms = _BOUNDED_FETCH_WAIT_MS if self._bounded else _FETCH_WAIT_MS
        consumer = new_consumer(self._bootstrap, fetch_wait_ms=fetch_wait_ms)
        self._consumer = await _started(consumer, self._bootstrap)
        consumer.assign([cursor.tp for cursor in self._cursors])
        for cursor in self._cursors:
            consumer.seek(cursor.tp, cursor.offset)
        if self._bounded:
            await self._fix_ends([cursor for cursor in self._cursors if cursor.end is None])
        for cursor in self._cursors:
            if cursor.ended:
                consumer.pause(cursor.tp)

    async def read(self, max_records: int) -> list[T]:
        """Return 1 to ``max_records`` records, waiting for some; ``[]`` once all ended."""
        while runs := await self.read_splits(max_records):
            if records := [record for run in runs for record in run.records]:
                return records
        return []

    async def read_splits(self, max_records: int) -> list[SplitRecords[T]]:
        """``read``'s records by partition; a partition that reached its end says it finished.

        Each partition is a split with a watermark of its own: a partition without records
        holds back its subtask's watermark, unless the strategy has ``with_idleness``.
        """
        if max_records < 1:
            raise ValueError(f"max_records must be at least 1; got {max_records}")
        while True:
            if finished := self._newly_finished():
                return finished
            active = [cursor for cursor in self._cursors if not cursor.ended]
            if not active:
                if self._bounded:
                    return []
                await anyio.sleep_forever()  # an unbounded reader without partitions never ends
            fetched = await self._consumer.getmany(
                *(cursor.tp for cursor in active), timeout_ms=_POLL_MS, max_records=max_records
            )
            runs = [await self._run(cursor, fetched.get(cursor.tp, [])) for cursor in active]
            if runs := [run for run in runs if run.records or run.finished]:
                return runs

    def snapshot_splits(self) -> list[SourceSplit]:
        """Return every partition with the offset after the last record returned."""
        return [cursor.to_split() for cursor in self._cursors]

    async def close(self) -> None:
        """Disconnect; nothing is committed to Kafka."""
        if self._consumer is not None:
            await self._consumer.stop()

    async def _fix_ends(self, cursors: list[PartitionCursor]) -> None:
        # Every fetch answer carries the partition's high watermark; the first one after
        # assigning is the end. The consumer fetches on its own and aiokafka signals no
        # fetch answer, so look every few milliseconds until it has heard of each partition.
        with anyio.move_on_after(_REQUEST_TIMEOUT_S):
            while any(self._consumer.highwater(cursor.tp) is None for cursor in cursors):  # noqa: ASYNC110
                await anyio.sleep(_END_POLL_S)
        for cursor in cursors:
            cursor.end = self._consumer.highwater(cursor.tp)
            if cursor.end is None:
                raise ConnectorError(
                    f"the Kafka broker at {self._bootstrap} did not answer a fetch of "
                    f"partition {cursor.partition} of topic '{cursor.topic}' within "
                    f"{_REQUEST_TIMEOUT_S:g}s, so its end is unknown; check the broker"
                )

    async def _run(self, cursor: PartitionCursor, fetched: list[Any]) -> SplitRecords[T]:
        records = await self._deliver(cursor, fetched)
        if cursor.ended:
            self._told_finished.add(cursor.split_id)
        return SplitRecords(cursor.split_id, records, finished=cursor.ended)

    def _newly_finished(self) -> list[SplitRecords[T]]:
        # Partitions that had ended before this reader opened (restored at their end).
        told = self._told_finished
        ended = [c.split_id for c in self._cursors if c.ended and c.split_id not in told]
        self._told_finished.update(ended)
        return [SplitRecords(split_id, [], finished=True) for split_id in ended]

    async def _deliver(self, cursor: PartitionCursor, fetched: list[Any]) -> list[T]:
        end = cursor.end
        kept = fetched if end is None else [raw for raw in fetched if raw.offset < end]
        records = [self._decode(kafka_record(raw)) for raw in kept]
        # The consumer's position also steps over offsets that hold no record for us
        # (transaction markers, compacted gaps), so a bounded split can reach its end.
        position: int = await self._consumer.position(cursor.tp)
        cursor.offset = position if end is None else min(position, end)
        if cursor.ended:
            self._consumer.pause(cursor.tp)
        return records

    def __repr__(self) -> str:
        splits = ", ".join(
            f"{c.topic}:{c.partition}@{c.offset}/{'...' if c.end is None else c.end}"
            for c in self._cursors
        )
        return f"<KafkaReader [{splits}]>"
