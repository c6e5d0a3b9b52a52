"""Redis Streams connectors: a source replayable by entry id and an effectively-once sink.

- ``RedisStreamSource``: replayable by entry id: exactly-once reads on restore.
- ``RedisStreamSink``: effectively-once: appends at once; replayed records are not appended
  twice (deterministic replay assumed).

Needs the ``redis`` extra (``pip install 'lockgate[redis]'``), which brings ``redis.asyncio``.
"""

from lockgate.connectors.redis.sink import (
    RedisStreamSink,
    RedisStreamWriter,
    RedisStreamWriterStatistics,
)
from lockgate.connectors.redis.source import RedisStreamSource, StreamEntry, decode_entry

__all__ = [
    "RedisStreamSink",
    "RedisStreamSource",
    "RedisStreamWriter",
    "RedisStreamWriterStatistics",
    "StreamEntry",
    "decode_entry",
]
