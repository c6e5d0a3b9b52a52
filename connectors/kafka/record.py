"""KafkaRecord: one record of a Kafka topic partition, as the broker stores it."""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["KafkaRecord", "kafka_record"]


class KafkaRecord(NamedTuple):
    """One record of a Kafka topic partition, as the broker stores it."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: tuple[tuple[str, bytes], ...] = ()


def kafka_record(raw: Any) -> KafkaRecord:
    """The ``KafkaRecord`` of a record aiokafka fetched."""
    headers = tuple((str(name), bytes(value)) for name, value in raw.headers or ())
    return KafkaRecord(
        raw.topic, raw.partition, raw.offset, raw.key, raw.value, raw.timestamp, headers
    )
