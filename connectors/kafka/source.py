"""KafkaSource: Kafka topics replayable by offset (the ``kafka`` extra)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar, overload

import anyio

from lockgate.connectors.errors import ConnectorError, InputNotFound, InvalidSplit
from lockgate.connectors.kafka.client import (
    _REQUEST_TIMEOUT_S,
    AIOKafkaConsumer,
    TopicPartition,
    _started,
)
from lockgate.engine import TypeCodec
from lockgate.engine.io.asyncio_only import require_asyncio
from lockgate.engine.io.sources import Source, SourceContext, SourceReader, SourceSplit

__all__ = ["KafkaRecord", "KafkaSource"]

T = TypeVar("T")

Decoder = Callable[["KafkaRecord"], T]

# How long a read waits in one fetch before asking again; cancelling interrupts it at once.
_POLL_MS = 1000
# How often a bounded reader looks whether the first fetch told each partition's end.
_END_POLL_S = 0.005
# How long the broker holds a fetch that finds nothing new (aiokafka's default, and bounded).
_FETCH_WAIT_MS = 500
_BOUNDED_FETCH_WAIT_MS = 20


class KafkaRecord(NamedTuple):
    """One record of a Kafka topic partition, as the broker stores it."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: tuple[tuple[str, bytes], ...] = ()


def _as_record(record: KafkaRecord) -> KafkaRecord:
    return record


def _record_fields(record: KafkaRecord) -> dict[str, Any]:
    return record._asdict()


def _record_from_fields(fields: dict[str, Any]) -> KafkaRecord:
    return KafkaRecord(**fields)


class KafkaSource(Source[T]):
    """A source reading Kafka topics, replayable by offset.

    Exactly-once reads on restore: each partition of each topic is one split, spread over the
    subtasks, whose position is the plain data ``{"offset": next, "end": end or None}``;
    ``offset`` is the offset after the last record the reader returned, so a reader built
    from snapshotted splits resumes with the record after it. Offsets live in the job's
    checkpoints, never in a consumer group: readers assign their partitions and seek, commit
    nothing to Kafka, and any number of jobs may read the same topics.

    The partitions are asked from the broker once, when the first run builds its splits (one
    metadata request, awaited on the job's loop in ``discover_splits``, so the host's other
    tasks keep running); a topic that does not exist then raises ``InputNotFound``.
    Partitions and topics added later are not read: a restored job reads the splits of its
    checkpoint. Reading starts at each partition's earliest offset; records deleted by
    retention before a reader reached them are skipped.

    Unbounded by default: a read waits until a record comes, and cancelling the job
    interrupts the wait at once; a subtask with no partition waits forever. With
    ``stop_at_end=True`` the source is bounded: when a reader opens, each split without an
    end takes as its end the high watermark the broker reports in the reader's first fetch
    (the high watermark of a fetch, not a ListOffsets answer, which Tansu gets wrong for
    batches), and later records are not read. The end is kept in positions, so a restored
    job stops there too.

    Records are ``KafkaRecord(topic, partition, offset, key, value, timestamp, headers)``
    with raw ``bytes`` keys and values, or what ``decode(record)`` returns for one.
    """

    @overload
    def __init__(
        self: KafkaSource[KafkaRecord],
        bootstrap: str,
        topics: Sequence[str],
        *,
        stop_at_end: bool = False,
    ) -> None: ...
    @overload
    def __init__(
        self,
        bootstrap: str,
        topics: Sequence[str],
        *,
        decode: Decoder[T],
        stop_at_end: bool = False,
    ) -> None: ...
    def __init__(
        self,
        bootstrap: str,
        topics: Sequence[str],
        *,
        decode: Decoder[Any] = _as_record,
        stop_at_end: bool = False,
    ) -> None:
        if isinstance(topics, str) or not topics:
            raise ValueError(f"topics must be a non-empty list of topic names; got {topics!r}")
        if len(set(topics)) != len(topics):
            raise ValueError(f"topics must not repeat a name; got {topics!r}")
        self._bootstrap = bootstrap
        self._topics = tuple(topics)
        self._decode: Decoder[T] = decode
        self._stop_at_end = stop_at_end
        self._partitions: tuple[tuple[str, int], ...] | None = None

    @property
    def bounded(self) -> bool:
        """Whether the source stops at each partition's end (``stop_at_end``)."""
        return self._stop_at_end

    @property
    def topics(self) -> tuple[str, ...]:
        """The topics whose partitions are the splits."""
        return self._topics

    def state_types(self) -> Sequence[TypeCodec]:
        """``KafkaRecord``, stored as its fields: records a job keeps in state can be saved.

        Split positions are plain data; the records are not, and a job keeps them in state
        whenever a sink's transactions or an operator hold them before a savepoint.
        """
        return (
            TypeCodec(KafkaRecord, "lockgate.KafkaRecord", _record_fields, _record_from_fields),
        )

    async def discover_splits(self) -> None:
        """Ask the broker for the topics' partitions, on the first call only.

        Every subtask and attempt of a job therefore sees the same splits. The request is
        async I/O on the job's event loop: it never blocks the loop, and cancelling the job
        interrupts it.

        Raises:
            AsyncioRequired: the job runs on trio; aiokafka needs asyncio.
            InputNotFound: a topic does not exist.
            ConnectorError: the broker cannot be reached.
        """
        require_asyncio(f"Kafka source of topics {list(self._topics)}", "aiokafka")
        if self._partitions is None:
            self._partitions = await _list_partitions(self._bootstrap, self._topics)

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        """Return one split per partition, at its earliest offset; the end is set on open.

        Raises:
            ConnectorError: ``discover_splits`` has not found the partitions yet (a job
                awaits it first).
        """
        if parallelism < 1:
            raise ValueError(f"parallelism must be at least 1; got {parallelism}")
        if self._partitions is None:
            raise ConnectorError(
                f"Kafka source of topics {list(self._topics)} does not know their partitions "
                "yet; await discover_splits() before create_splits() (a job does so itself)"
            )
        return [
            SourceSplit(f"{topic}:{partition}", {"offset": 0, "end": None})
            for topic, partition in self._partitions
        ]

    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[T]:
        """Return a reader of ``splits``, each resumed at its ``offset``.

        Raises:
            AsyncioRequired: the job runs on trio; aiokafka needs asyncio.
        """
        require_asyncio("Kafka source", "aiokafka", context=context)
        cursors = [self._cursor(split, context) for split in splits]
        return _PartitionReader(self._bootstrap, self._decode, cursors, bounded=self.bounded)

    def _cursor(self, split: SourceSplit, context: SourceContext) -> _PartitionCursor:
        topic, _, partition = split.split_id.rpartition(":")
        position = split.position
        if topic not in self._topics or not partition.isdigit() or not _is_position(position):
            raise InvalidSplit(
                f"Kafka source '{context.uid}' (subtask {context.subtask_index + 1}/"
                f"{context.parallelism}) cannot resume split '{split.split_id}' from "
                f"{position!r}: expected '<topic>:<partition>' of the topics "
                f"{list(self._topics)} at {{'offset': <int>, 'end': <int> or None}}; restore "
                "from a checkpoint of this same source"
            )
        return _PartitionCursor(topic, int(partition), position["offset"], position["end"])

    def __repr__(self) -> str:
        end = " stop_at_end" if self._stop_at_end else ""
        return f"<KafkaSource {self._bootstrap} topics={list(self._topics)}{end}>"


def _is_position(position: Any) -> bool:
    if not isinstance(position, dict) or set(position) != {"offset", "end"}:
        return False
    offset, end = position["offset"], position["end"]
    return _is_offset(offset) and (end is None or _is_offset(end))


def _is_offset(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


async def _list_partitions(bootstrap: str, topics: Sequence[str]) -> tuple[tuple[str, int], ...]:
    consumer = await _started(_consumer(bootstrap), bootstrap)
    try:
        found = await consumer.topics()
        missing = [topic for topic in topics if topic not in found]
        if missing:
            raise InputNotFound(
                f"Kafka topics {missing} do not exist at {bootstrap}; create them before "
                "starting the job (KafkaSource reads the partitions a topic has when it starts)"
            )
        return tuple(
            (topic, partition)
            for topic in topics
            for partition in sorted(consumer.partitions_for_topic(topic))
        )
    finally:
        await consumer.stop()


def _consumer(bootstrap: str, *, fetch_wait_ms: int = _FETCH_WAIT_MS) -> Any:
    return AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",  # where a position deleted by retention resumes
        request_timeout_ms=int(_REQUEST_TIMEOUT_S * 1000),
        fetch_max_wait_ms=fetch_wait_ms,
    )


@dataclass(slots=True)
class _PartitionCursor:
    """How far a reader got in one partition."""

    topic: str
    partition: int
    offset: int
    end: int | None

    @property
    def tp(self) -> Any:
        return TopicPartition(self.topic, self.partition)

    @property
    def ended(self) -> bool:
        return self.end is not None and self.offset >= self.end

    def to_split(self) -> SourceSplit:
        return SourceSplit(
            f"{self.topic}:{self.partition}", {"offset": self.offset, "end": self.end}
        )


class _PartitionReader(SourceReader[T]):
    """Reads its partitions with one consumer, assigned and positioned by hand."""

    def __init__(
        self,
        bootstrap: str,
        decode: Decoder[T],
        cursors: list[_PartitionCursor],
        *,
        bounded: bool,
    ) -> None:
        self._bootstrap = bootstrap
        self._decode = decode
        self._cursors = cursors
        self._bounded = bounded
        self._consumer: Any = None

    async def open(self) -> None:
        """Connect and seek each partition; a bounded reader fixes the ends it lacks."""
        if not self._cursors:
            return
        # A fetch of a partition with nothing new waits this long for a record: short when
        # bounded, where such an answer only tells the end of a caught-up partition.
        fetch_wait_ms = _BOUNDED_FETCH_WAIT_MS if self._bounded else _FETCH_WAIT_MS
        consumer = _consumer(self._bootstrap, fetch_wait_ms=fetch_wait_ms)
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
        if max_records < 1:
            raise ValueError(f"max_records must be at least 1; got {max_records}")
        while True:
            active = [cursor for cursor in self._cursors if not cursor.ended]
            if not active:
                if self._bounded:
                    return []
                await anyio.sleep_forever()  # an unbounded reader without partitions never ends
            fetched = await self._consumer.getmany(
                *(cursor.tp for cursor in active), timeout_ms=_POLL_MS, max_records=max_records
            )
            records: list[T] = []
            for cursor in active:
                records += await self._deliver(cursor, fetched.get(cursor.tp, []))
            if records:
                return records

    def snapshot_splits(self) -> list[SourceSplit]:
        """Return every partition with the offset after the last record returned."""
        return [cursor.to_split() for cursor in self._cursors]

    async def close(self) -> None:
        """Disconnect; nothing is committed to Kafka."""
        if self._consumer is not None:
            await self._consumer.stop()

    async def _fix_ends(self, cursors: list[_PartitionCursor]) -> None:
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

    async def _deliver(self, cursor: _PartitionCursor, fetched: list[Any]) -> list[T]:
        end = cursor.end
        kept = fetched if end is None else [raw for raw in fetched if raw.offset < end]
        records = [self._decode(_record(raw)) for raw in kept]
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


def _record(raw: Any) -> KafkaRecord:
    headers = tuple((str(name), bytes(value)) for name, value in raw.headers or ())
    return KafkaRecord(
        raw.topic, raw.partition, raw.offset, raw.key, raw.value, raw.timestamp, headers
    )
