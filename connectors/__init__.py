"""Sources and sinks for lockgate jobs.

Each connector states its delivery guarantee in its docstring:

| Connector           | Kind   | Guarantee                                                  |
|---------------------|--------|------------------------------------------------------------|
| `CollectionSource`  | source | replayable by index: exactly-once reads on restore         |
| `FileSource`        | source | replayable by byte offset: exactly-once reads on restore   |
| `RedisStreamSource` | source | replayable by entry id: exactly-once reads on restore      |
| `KafkaSource`       | source | replayable by offset: exactly-once reads on restore        |
| `CollectSink`       | sink   | exactly-once: two-phase commit when checkpoints complete   |
| `FileSink`          | sink   | exactly-once: part files published by two-phase commit     |
| `PostgresSink`      | sink   | exactly-once: PREPARE TRANSACTION, COMMIT PREPARED;        |
|                     |        | or effectively-once upserts (mode="upsert")                |
| `S3FileSink`        | sink   | exactly-once: multipart uploads completed on commit        |
| `RedisStreamSink`   | sink   | effectively-once: replayed records are recognised and      |
|                     |        | skipped (idempotent appends, visible at once)              |
| `KafkaSink`         | sink   | at-least-once: broker acks awaited before each checkpoint  |
|                     |        | completes (Kafka transactions are not used: the Tansu test |
|                     |        | broker does not isolate them, so exactly-once is unproven) |
| `PrintSink`         | sink   | standard output, for debugging: at-least-once              |

A replayable source rewinds to the positions of the restored checkpoint, so each record
is reflected once in the job's state; end-to-end exactly-once output also needs a
transactional (two-phase-commit) or idempotent sink.

Connectors backed by an extra are imported on first use, so ``import lockgate.connectors``
needs none of them: ``PostgresSink`` (extra ``postgres``), ``RedisStreamSource`` and
``RedisStreamSink`` (extra ``redis``), ``S3FileSink`` (extra ``s3``), ``KafkaSource`` and
``KafkaSink`` (extra ``kafka``).
"""

from importlib import import_module
from typing import Any

from lockgate.connectors.errors import ConnectorError
from lockgate.connectors.files import FileSink, FileSource, RollingPolicy
from lockgate.connectors.memory import CollectionSource, CollectSink, PrintSink

__all__ = [
    "CollectSink",
    "CollectionSource",
    "ConnectorError",
    "FileSink",
    "FileSource",
    "KafkaSink",
    "KafkaSource",
    "PostgresSink",
    "PrintSink",
    "RedisStreamSink",
    "RedisStreamSource",
    "RollingPolicy",
    "S3FileSink",
]

_EXTRAS = {
    "KafkaSink": "lockgate.connectors.kafka",
    "KafkaSource": "lockgate.connectors.kafka",
    "PostgresSink": "lockgate.connectors.postgres",
    "RedisStreamSource": "lockgate.connectors.redis",
    "RedisStreamSink": "lockgate.connectors.redis",
    "S3FileSink": "lockgate.connectors.s3",
}


def __getattr__(name: str) -> Any:
    module = _EXTRAS.get(name)
    if module is None:
        raise AttributeError(f"module 'lockgate.connectors' has no attribute '{name}'")
    return getattr(import_module(module), name)
