"""KafkaSource: Kafka topics replayable by offset (the ``kafka`` extra)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, overload

from lockgate.connectors.errors import ConnectorError, InputNotFound, InvalidSplit
from lockgate.connectors.kafka.client import _started
from lockgate.connectors.kafka.reader import (
    Decoder,
    PartitionCursor,
    PartitionReader,
    new_consumer,
)
from lockgate.connectors.kafka.record import KafkaRecord
from lockgate.engine import TypeCodec
from lockgate.engine.io.asyncio_only import require_asyncio
from lockgate.engine.io.sources import Source, SourceContext, SourceReader, SourceSplit

__all__ = ["KafkaRecord", "KafkaSource"]

T = TypeVar("T")


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
        return PartitionReader(self._bootstrap, self._decode, cursors, bounded=self.bounded)

    def _cursor(self, split: SourceSplit, context: SourceContext) -> PartitionCursor:
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
        return PartitionCursor(topic, int(partition), position["offset"], position["end"])

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
    consumer = await _started(new_consumer(bootstrap), bootstrap)
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
