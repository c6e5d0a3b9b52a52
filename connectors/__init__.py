"""Sources and sinks for lockgate jobs.

Each connector states its delivery guarantee in its docstring; the connectors guide of the
docs (``docs/guides/connectors.md``) holds the one table of them all. A replayable source
rewinds to the positions of the restored checkpoint; end-to-end exactly-once output also
needs a transactional (two-phase-commit) or idempotent sink.

Connectors backed by an extra are imported on first use, so ``import lockgate.connectors``
needs none of them: ``PostgresSink`` (extra ``postgres``), ``RedisStreamSource`` and
``RedisStreamSink`` (extra ``redis``), ``S3FileSink`` (extra ``s3``), ``KafkaSource`` and
``KafkaSink`` (extra ``kafka``).
"""

from importlib import import_module
from typing import Any

from lockgate.connectors.errors import (
    ConnectorError,
    IngressClosed,
    IngressFull,
    IngressNotCommitted,
    SubscriberTooSlow,
)
from lockgate.connectors.files import FileSink, FileSource, RollingPolicy
from lockgate.connectors.memory import CollectionSource, CollectSink, PrintSink
from lockgate.connectors.service import CommittedSink, IngressSource

__all__ = [
    "CollectSink",
    "CollectionSource",
    "CommittedSink",
    "ConnectorError",
    "FileSink",
    "FileSource",
    "IngressClosed",
    "IngressFull",
    "IngressNotCommitted",
    "IngressSource",
    "KafkaSink",
    "KafkaSource",
    "PostgresSink",
    "PrintSink",
    "RedisStreamSink",
    "RedisStreamSource",
    "RollingPolicy",
    "S3FileSink",
    "SubscriberTooSlow",
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
