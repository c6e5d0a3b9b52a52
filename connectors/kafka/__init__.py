"""Kafka connectors: a source replayable by offset and an at-least-once sink.

- ``KafkaSource``: replayable by offset: exactly-once reads on restore.
- ``KafkaSink``: at-least-once: every record before a checkpoint is acknowledged by the
  broker before the checkpoint completes; records after it may be written again on restore.

Needs the ``kafka`` extra (``pip install 'lockgate[kafka]'``), which brings aiokafka.
"""

from lockgate.connectors.kafka.sink import (
    KafkaSink,
    KafkaWriter,
    KafkaWriterStatistics,
    encode_value,
)
from lockgate.connectors.kafka.source import KafkaRecord, KafkaSource

__all__ = [
    "KafkaRecord",
    "KafkaSink",
    "KafkaSource",
    "KafkaWriter",
    "KafkaWriterStatistics",
    "encode_value",
]
