"""RedisStreamSink: effectively-once appends to a Redis stream (the ``redis`` extra)."""

from __future__ import annotations

import hashlib
import math
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript

from lockgate.connectors.errors import ConnectorError, UnencodableRecord
from lockgate.connectors.redis.source import StreamEntry
from lockgate.engine.io.asyncio_only import require_asyncio
from lockgate.engine.io.sinks import Sink, SinkContext, SinkWriter

__all__ = ["RedisStreamSink", "RedisStreamWriter", "RedisStreamWriterStatistics"]

T = TypeVar("T")

Encoder = Callable[[T], Mapping[Any, Any]]

# Records per Lua call: each call is atomic and blocks Redis while it runs, so keep it short.
_CHUNK = 256
_WEEK = 7 * 24 * 3600.0


class RedisStreamSink(Sink[T]):
    """A sink appending each record as an entry of one Redis stream: effectively-once.

    Entries are appended (``XADD``, auto ids) as records arrive, without waiting for
    checkpoints. After a failure the job replays the records after the restored checkpoint;
    the writer recognises those the failed attempt already appended and does not append them
    again, so the stream holds each record of the job's output once. This is effectively-once,
    not exactly-once: entries are visible before the checkpoint covering them completes, and
    an entry the failed attempt appended stays even if the replay does not produce it again.
    It holds when the replay is deterministic in content (the same records reach the same
    sink subtask; their order may differ) and the job restores at the same parallelism and
    from its latest checkpoint. Otherwise records after the checkpoint may be duplicated
    (at-least-once), never lost. Flink's idempotent sinks carry the same assumption.

    How: each writer subtask continues a *lineage* kept in the checkpoint. Every append and a
    count of the record's fingerprint (a BLAKE2b hash of its encoded fields) are written by
    one Lua script, atomically: the lineage's *window* counts entries appended and not yet
    covered by a completed checkpoint; a per-checkpoint *segment* counts what the writer
    emitted since its last snapshot. A completed checkpoint subtracts the segments before it
    from the window and deletes them. A restored writer drops the failed attempt's segments
    after the checkpoint, loads the window, and skips each replayed record whose fingerprint
    the window still counts (identical records are counted, never collapsed). A restart
    before any checkpoint continues its lineage too (keep the same sink object, as the
    engine does within a run); a fresh run starts a new one. Client retries are off, so a
    lost reply fails the job instead of appending twice. Redis holds about one hash field
    per record appended since the last completed checkpoint, so checkpoint regularly.

    Records are mappings of field names to ``str``, ``bytes``, ``int`` or ``float`` values,
    or ``StreamEntry`` (their fields are written); ``encode`` turns any other record into
    such a mapping. ``maxlen`` trims the stream to that many entries (exactly) on each append.
    The window and segment keys start with ``"<stream>:lockgate:"``; a finished job leaves
    none, and those of a cancelled job expire ``window_ttl`` seconds after their last write.
    """

    def __init__(
        self,
        url: str,
        stream: str,
        *,
        maxlen: int | None = None,
        encode: Encoder[T] | None = None,
        window_ttl: float = _WEEK,
    ) -> None:
        if maxlen is not None and maxlen < 1:
            raise ValueError(f"maxlen must be at least 1 entry, or None; got {maxlen}")
        if window_ttl <= 0:
            raise ValueError(f"window_ttl must be positive seconds; got {window_ttl}")
        self._options = _SinkOptions(url, stream, maxlen, encode, math.ceil(window_ttl))
        # The lineage of each writer, so that a restart before any checkpoint continues it.
        self._lineages: dict[tuple[str, str, int], str] = {}

    @property
    def stream(self) -> str:
        """The key of the stream the sink appends to."""
        return self._options.stream

    def create_writer(self, context: SinkContext) -> RedisStreamWriter[T]:
        """Return the writer of one subtask, continuing its lineage if there is one.

        Raises:
            AsyncioRequired: the job runs on trio; ``redis.asyncio`` needs asyncio.
        """
        require_asyncio("Redis stream sink", "redis.asyncio", context=context)
        lineage, restored_from = self._lineage(context)
        return RedisStreamWriter(self._options, context, lineage, restored_from)

    def _lineage(self, context: SinkContext) -> tuple[str, int | None]:
        """Return the writer's lineage and the checkpoint it resumes from (``None``: new).

        Situations: restored from a checkpoint (continue the first lineage it holds for this
        subtask; after a rescale the others' records may be duplicated); restarted before any
        checkpoint (continue this subtask's lineage from nothing); a fresh run (a new one).
        """
        key = (context.job_name, context.uid, context.subtask_index)
        restored_from: int | None = None
        if context.restored_state:
            restored = [_lineage_state(item, context) for item in context.restored_state]
            lineage, restored_from = restored[0]
        elif context.attempt > 0 and key in self._lineages:
            lineage, restored_from = self._lineages[key], 0
        else:
            lineage = "/".join([*map(str, key), uuid.uuid4().hex])
        self._lineages[key] = lineage
        return lineage, restored_from

    def __repr__(self) -> str:
        options = self._options
        return f"<RedisStreamSink stream={options.stream!r} maxlen={options.maxlen}>"


@dataclass(frozen=True, slots=True)
class _SinkOptions(Generic[T]):
    url: str
    stream: str
    maxlen: int | None
    encode: Encoder[T] | None
    window_ttl: int


def _lineage_state(item: Any, context: SinkContext) -> tuple[str, int]:
    if (
        isinstance(item, dict)
        and isinstance(item.get("lineage"), str)
        and isinstance(item.get("checkpoint"), int)
    ):
        return item["lineage"], item["checkpoint"]
    raise ConnectorError(
        f"Redis stream sink '{context.uid}' (subtask {context.subtask_index + 1}/"
        f"{context.parallelism}) cannot restore from state {item!r}: expected "
        "{'lineage': str, 'checkpoint': int}; restore from a checkpoint of this same sink"
    )


@dataclass(frozen=True, slots=True)
class RedisStreamWriterStatistics:
    """What a ``RedisStreamWriter`` did: entries appended, replayed records skipped.

    ``unclaimed`` counts entries of the restored window that no replayed record matched yet.
    """

    lineage: str
    appended: int
    skipped: int
    unclaimed: int


# KEYS: stream, window, segment, segments. ARGV: maxlen or '', base checkpoint, ttl, then per
# record: 'a' (append) or 'c' (claimed by an entry of the window), fingerprint, field count,
# fields. Appends and counts are one atomic step: a window never misses an appended entry.
_APPEND = """
local stream, window, segment, segments = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local appended, i = 0, 4
while i <= #ARGV do
  local fingerprint, count = ARGV[i + 1], tonumber(ARGV[i + 2])
  if ARGV[i] == 'a' then
    local command = {'XADD', stream}
    if ARGV[1] ~= '' then
      command[#command + 1] = 'MAXLEN'
      command[#command + 1] = ARGV[1]
    end
    command[#command + 1] = '*'
    for j = i + 3, i + 2 + 2 * count do command[#command + 1] = ARGV[j] end
    redis.call(unpack(command))
    redis.call('HINCRBY', window, fingerprint, 1)
    appended = appended + 1
  end
  redis.call('HINCRBY', segment, fingerprint, 1)
  i = i + 3 + 2 * count
end
redis.call('ZADD', segments, ARGV[2], segment)
for _, key in ipairs({window, segment, segments}) do redis.call('EXPIRE', key, ARGV[3]) end
return appended
"""

# KEYS: window, segments, then segment keys. ARGV: per segment '1' to subtract its counts
# from the window (a completed checkpoint covers it) or '0' to drop it (a dead attempt's).
_SETTLE = """
local window, segments = KEYS[1], KEYS[2]
for i = 3, #KEYS do
  if ARGV[i - 2] == '1' then
    local counts = redis.call('HGETALL', KEYS[i])
    for j = 1, #counts, 2 do
      if redis.call('HINCRBY', window, counts[j], -tonumber(counts[j + 1])) <= 0 then
        redis.call('HDEL', window, counts[j])
      end
    end
  end
  redis.call('DEL', KEYS[i])
  redis.call('ZREM', segments, KEYS[i])
end
return #KEYS - 2
"""


@dataclass(frozen=True, slots=True)
class _ScriptedClient:
    """A client without retries (a lost reply must fail the job, not append twice)."""

    client: Redis
    append: AsyncScript
    settle: AsyncScript

    @classmethod
    def connect(cls, url: str) -> _ScriptedClient:
        client = Redis.from_url(url, retry=Retry(NoBackoff(), 0))
        return cls(client, client.register_script(_APPEND), client.register_script(_SETTLE))


class RedisStreamWriter(SinkWriter[T]):
    """Appends one subtask's records to the sink's stream, each replayed record at most once.

    Invariant: the lineage's window counts, per fingerprint, the entries this lineage
    appended that no completed checkpoint covers yet; a record is skipped only while an
    entry of the restored window with its fingerprint is unclaimed, so nothing is lost.
    """

    def __init__(
        self,
        options: _SinkOptions[T],
        context: SinkContext,
        lineage: str,
        restored_from: int | None,
    ) -> None:
        self._options = options
        self._context = context
        self._lineage = lineage
        self._restored_from = restored_from
        self._base = restored_from or 0
        self._prefix = f"{options.stream}:lockgate:{lineage}"
        self._unclaimed: Counter[bytes] = Counter()
        self._appended = 0
        self._skipped = 0
        self._redis: _ScriptedClient | None = None

    async def open(self) -> None:
        """Connect without client retries; a restored writer settles and loads its window."""
        self._redis = _ScriptedClient.connect(self._options.url)
        if self._restored_from is not None:
            await self._settle(self._restored_from, drop_newer=True)
            window: Any = await self._redis.client.hgetall(self._window)
            self._unclaimed = Counter({bytes(key): int(count) for key, count in window.items()})

    async def write(self, records: list[T]) -> None:
        """Append the records that the restored window does not hold yet, in order."""
        arguments = [self._arguments(record) for record in records]
        for start in range(0, len(arguments), _CHUNK):
            chunk = arguments[start : start + _CHUNK]
            self._appended += await self._run_append([a for each in chunk for a in each])

    async def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        """Start a new segment: what follows is emitted after ``checkpoint_id``."""
        self._base = checkpoint_id
        return [{"lineage": self._lineage, "checkpoint": checkpoint_id}]

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Subtract the segments before ``checkpoint_id`` from the window: never replayed."""
        await self._settle(checkpoint_id, drop_newer=False)

    async def close(self) -> None:
        """Disconnect; the window stays for a restore (it expires after ``window_ttl``)."""
        if self._redis is not None:
            await self._redis.client.aclose()

    def statistics(self) -> RedisStreamWriterStatistics:
        """Return what the writer appended and skipped so far."""
        unclaimed = sum(self._unclaimed.values())
        return RedisStreamWriterStatistics(self._lineage, self._appended, self._skipped, unclaimed)

    @property
    def _window(self) -> str:
        return f"{self._prefix}:window"

    @property
    def _segments(self) -> str:
        return f"{self._prefix}:segments"

    def _arguments(self, record: T) -> list[bytes]:
        fields = self._fields(record)
        fingerprint = _fingerprint(fields)
        if self._unclaimed[fingerprint] > 0:
            self._unclaim(fingerprint)
            return [b"c", fingerprint, b"0"]
        return [b"a", fingerprint, str(len(fields) // 2).encode(), *fields]

    def _unclaim(self, fingerprint: bytes) -> None:
        self._unclaimed[fingerprint] -= 1
        if not self._unclaimed[fingerprint]:
            del self._unclaimed[fingerprint]
        self._skipped += 1

    async def _run_append(self, records: list[bytes]) -> int:
        options = self._options
        maxlen = "" if options.maxlen is None else str(options.maxlen)
        segment = f"{self._prefix}:segment:{self._base}"
        keys = [options.stream, self._window, segment, self._segments]
        arguments: list[bytes | str] = [maxlen, str(self._base), str(options.window_ttl)]
        script = self._connected().append
        return int(await script(keys=keys, args=[*arguments, *records]))

    async def _settle(self, checkpoint_id: int, *, drop_newer: bool) -> None:
        # Segments before the checkpoint are covered by it: subtract them from the window.
        # On restore, segments at or after it are the dead attempt's output: drop them.
        redis = self._connected()
        limit = "+inf" if drop_newer else f"({checkpoint_id}"
        found: Any = await redis.client.zrangebyscore(
            self._segments, "-inf", limit, withscores=True
        )
        segments = [(bytes(segment), float(base)) for segment, base in found]
        if not segments:
            return
        flags = [b"1" if base < checkpoint_id else b"0" for _, base in segments]
        keys: list[bytes | str] = [self._window, self._segments]
        keys += [segment for segment, _ in segments]
        await redis.settle(keys=keys, args=flags)

    def _fields(self, record: T) -> list[bytes]:
        encode = self._options.encode
        mapping = encode(record) if encode is not None else self._default_mapping(record)
        fields = [_field_bytes(part) for pair in mapping.items() for part in pair]
        if not fields or any(field is None for field in fields):
            raise self._unencodable(record, mapping)
        return [field for field in fields if field is not None]

    def _default_mapping(self, record: T) -> Mapping[Any, Any]:
        if isinstance(record, StreamEntry):
            return record.fields
        if isinstance(record, Mapping):
            return record
        raise self._unencodable(record, None)

    def _unencodable(self, record: T, mapping: Mapping[Any, Any] | None) -> UnencodableRecord:
        context = self._context
        shown = repr(record if mapping is None else mapping)[:120]
        return UnencodableRecord(
            f"Redis stream sink '{context.uid}' (subtask {context.subtask_index + 1}/"
            f"{context.parallelism}) cannot append {shown}: an entry needs at least one field "
            "and maps field names to str, bytes, int or float values; pass encode= to "
            "RedisStreamSink to turn records into such a mapping"
        )

    def _connected(self) -> _ScriptedClient:
        assert self._redis is not None, "write() before open()"
        return self._redis

    def __repr__(self) -> str:
        context = self._context
        return (
            f"<RedisStreamWriter '{context.uid}' subtask {context.subtask_index + 1}/"
            f"{context.parallelism} lineage={self._lineage!r} base={self._base} "
            f"appended={self._appended} skipped={self._skipped}>"
        )


def _field_bytes(value: Any) -> bytes | None:
    # As redis-py encodes: text as UTF-8, numbers as their repr; bool is refused (ambiguous).
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value).encode()
    return None


def _fingerprint(fields: list[bytes]) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    for field in fields:
        digest.update(len(field).to_bytes(4, "big"))
        digest.update(field)
    return digest.digest()
