"""KafkaSink: at-least-once production to a Kafka topic (the ``kafka`` extra).

Kafka exactly-once output (transactional producers committed on checkpoint completion) is not
offered and not verified here: the Tansu broker this project tests against does not isolate
transactions (aborted records are visible to ``read_committed`` consumers), so no test could
tell a correct transactional sink from a broken one.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import orjson

from lockgate.connectors.errors import ConnectorError, UnencodableRecord
from lockgate.connectors.kafka.client import (
    _REQUEST_TIMEOUT_S,
    AIOKafkaProducer,
    KafkaError,
    _started,
)
from lockgate.connectors.kafka.record import KafkaRecord
from lockgate.engine.io.asyncio_only import require_asyncio
from lockgate.engine.io.sinks import Sink, SinkContext, SinkWriter

__all__ = ["KafkaSink", "KafkaWriter", "KafkaWriterStatistics", "encode_value"]

T = TypeVar("T")

KeyFunction = Callable[[T], bytes | str | None]
Encoder = Callable[[T], bytes | str | None]


def encode_value(record: Any) -> bytes | None:
    """Return a record's value bytes (the default encoding of ``KafkaSink``).

    A ``KafkaRecord`` gives its own value (``None`` for a tombstone), ``bytes`` are kept,
    ``str`` is encoded as UTF-8, anything else as JSON.

    Raises:
        TypeError: the record is not JSON-serialisable.
    """
    if isinstance(record, KafkaRecord):
        return record.value
    if isinstance(record, bytes):
        return record
    if isinstance(record, str):
        return record.encode()
    return orjson.dumps(record)


def _default_key(record: Any) -> bytes | None:
    return record.key if isinstance(record, KafkaRecord) else None


@dataclass(frozen=True, slots=True)
class KafkaWriterStatistics:
    """What one sink writer sent to Kafka and what the broker has acknowledged."""

    sent: int
    acknowledged: int


class KafkaSink(Sink[T]):
    """A sink producing each record to one Kafka topic: at-least-once.

    At-least-once: records are sent as they arrive (``acks="all"``); before a writer's
    snapshot for checkpoint n returns it waits until the broker has acknowledged every
    record written before it, and ``finish`` does the same for a bounded job's last records,
    so a completed checkpoint never covers a record Kafka does not hold. After a failure the
    job replays the records after the restored checkpoint: those the failed attempt had
    already sent are written again (duplicates), none is lost. Records are visible to
    consumers as soon as they are sent, before any checkpoint covers them.

    Exactly-once output with Kafka transactions is not offered and not verified here: the
    Tansu broker used in this project's tests does not isolate transactions, so such a sink
    could not be tested. Producers are not idempotent (Tansu does not support it either).

    ``key(record)`` gives each record's key (``str`` as UTF-8, ``bytes``, or ``None`` to let
    the producer spread keyless records); by default a ``KafkaRecord`` keeps its key and
    other records have none. ``encode(record)`` gives the value; by default ``encode_value``.
    """

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        *,
        key: KeyFunction[T] | None = None,
        encode: Encoder[T] | None = None,
    ) -> None:
        if not topic or not isinstance(topic, str):
            raise ValueError(f"topic must be a topic name; got {topic!r}")
        self._options = _SinkOptions(bootstrap, topic, key or _default_key, encode or encode_value)

    @property
    def topic(self) -> str:
        """The topic every record is produced to."""
        return self._options.topic

    def create_writer(self, context: SinkContext) -> KafkaWriter[T]:
        """Return the writer of one subtask, with its own producer.

        Raises:
            AsyncioRequired: the job runs on trio; aiokafka needs asyncio.
        """
        require_asyncio("Kafka sink", "aiokafka", context=context)
        return KafkaWriter(self._options, context)

    def __repr__(self) -> str:
        return f"<KafkaSink {self._options.bootstrap} topic={self._options.topic!r}>"


@dataclass(frozen=True, slots=True)
class _SinkOptions(Generic[T]):
    bootstrap: str
    topic: str
    key: KeyFunction[T]
    encode: Encoder[T]


class KafkaWriter(SinkWriter[T]):
    """The writer of one ``KafkaSink`` subtask: sends at once, waits for acks at snapshots.

    Invariant: when ``snapshot_state`` or ``finish`` returns, the broker has acknowledged
    every record ``write`` was given before it; a record Kafka refused fails the job.
    """

    def __init__(self, options: _SinkOptions[T], context: SinkContext) -> None:
        self._options = options
        self._context = context
        self._producer: Any = None
        self._in_flight: collections.deque[asyncio.Future[Any]] = collections.deque()
        self._sent = 0
        self._acknowledged = 0

    async def open(self) -> None:
        """Start the producer."""
        producer = AIOKafkaProducer(
            bootstrap_servers=self._options.bootstrap,
            acks="all",
            enable_idempotence=False,
            request_timeout_ms=int(_REQUEST_TIMEOUT_S * 1000),
        )
        self._producer = await _started(producer, self._options.bootstrap)

    async def write(self, records: list[T]) -> None:
        """Send each record; the producer's buffer backpressures the job when it is full."""
        topic = self._options.topic
        for record in records:
            key, value = self._encode(record)
            try:
                self._in_flight.append(await self._producer.send(topic, value, key=key))
            except KafkaError as error:  # no metadata for the topic in time, a record too large
                raise self._refused(error) from error
            self._sent += 1
        self._settle(wait=False)

    async def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        """Wait until the broker acknowledged every record sent; nothing to store."""
        await self._wait_acknowledged()
        return []

    async def finish(self) -> None:
        """Wait until the broker acknowledged every record sent."""
        await self._wait_acknowledged()

    async def close(self) -> None:
        """Stop the producer."""
        if self._producer is not None:
            await self._producer.stop()

    def statistics(self) -> KafkaWriterStatistics:
        """Return how many records this writer sent and how many the broker acknowledged."""
        return KafkaWriterStatistics(self._sent, self._acknowledged)

    async def _wait_acknowledged(self) -> None:
        if self._in_flight:
            await self._producer.flush()
            await asyncio.wait(self._in_flight)
        self._settle(wait=True)

    def _settle(self, *, wait: bool) -> None:
        # Acknowledgements arrive in order per partition, not across them: count the done
        # ones from the front; the first refused record fails the job.
        while self._in_flight and (wait or self._in_flight[0].done()):
            error = self._in_flight.popleft().exception()
            if error is not None:
                raise self._refused(error) from error
            self._acknowledged += 1

    def _refused(self, error: BaseException) -> ConnectorError:
        context = self._context
        return ConnectorError(
            f"Kafka sink '{context.uid}' (subtask {context.subtask_index + 1}/"
            f"{context.parallelism}) could not write to topic '{self._options.topic}' at "
            f"{self._options.bootstrap}: {error!r}; the job restarts from its last checkpoint"
        )

    def _encode(self, record: T) -> tuple[bytes | None, bytes | None]:
        try:
            key, value = self._options.key(record), self._options.encode(record)
        except Exception as error:
            raise self._unencodable(record) from error
        if not isinstance(key, bytes | str | None) or not isinstance(value, bytes | str | None):
            raise self._unencodable(record)
        return _bytes(key), _bytes(value)

    def _unencodable(self, record: T) -> UnencodableRecord:
        context = self._context
        return UnencodableRecord(
            f"Kafka sink '{context.uid}' (subtask {context.subtask_index + 1}/"
            f"{context.parallelism}) cannot produce {repr(record)[:120]}: a key and a value "
            "must be bytes, str or None; pass key= and encode= to KafkaSink to turn records "
            "into them"
        )

    def __repr__(self) -> str:
        context = self._context
        return (
            f"<KafkaWriter '{context.uid}' subtask {context.subtask_index + 1}/"
            f"{context.parallelism} topic={self._options.topic!r} sent={self._sent} "
            f"acknowledged={self._acknowledged}>"
        )


def _bytes(value: bytes | str | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value
