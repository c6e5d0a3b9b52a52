"""Redis Streams connectors: a source replayable by entry id and an effectively-once sink.

- ``RedisStreamSource``: replayable by entry id: exactly-once reads on restore.
- ``RedisStreamSink``: effectively-once: appends at once; replayed records are not appended
  twice (deterministic replay assumed).

Needs the ``redis`` extra (``pip install 'lockgate[redis]'``), which brings ``redis.asyncio``.
"""

from __future__ import annotations

import hashlib
import math
import re
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar, overload

import anyio
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript

from lockgate.connectors.errors import (
    ConnectorError,
    InvalidSplit,
    UndecodableInput,
    UnencodableRecord,
)
from lockgate.engine.sinks import Sink, SinkContext, SinkWriter
from lockgate.engine.sources import Source, SourceContext, SourceReader, SourceSplit

__all__ = [
    "RedisStreamSink",
    "RedisStreamSource",
    "RedisStreamWriter",
    "RedisStreamWriterStatistics",
    "StreamEntry",
    "decode_entry",
]

T = TypeVar("T")

Decoder = Callable[[str, str, dict[bytes, bytes]], T]
Encoder = Callable[[T], Mapping[Any, Any]]

_ENTRY_ID = re.compile(r"\d+-\d+")
# A blocked XREAD answers after block_ms; a socket silent for this much longer is dead.
_SOCKET_MARGIN = 10.0
# Records per Lua call: each call is atomic and blocks Redis while it runs, so keep it short.
_CHUNK = 256
_WEEK = 7 * 24 * 3600.0


class StreamEntry(NamedTuple):
    """One entry of a Redis stream: its key, its id, and its fields as UTF-8 text."""

    stream: str
    entry_id: str
    fields: dict[str, str]


def decode_entry(stream: str, entry_id: str, fields: dict[bytes, bytes]) -> StreamEntry:
    """Return the entry with field names and values decoded as UTF-8 (the default decoding).

    Raises:
        UndecodableInput: a field name or value is not UTF-8 text.
    """
    try:
        text = {name.decode(): value.decode() for name, value in fields.items()}
    except UnicodeDecodeError as error:
        raise UndecodableInput(
            f"entry {entry_id} of Redis stream '{stream}' has a field that is not UTF-8 text; "
            "pass decode= to RedisStreamSource to read the raw bytes"
        ) from error
    return StreamEntry(stream, entry_id, text)


def _parse_id(entry_id: str) -> tuple[int, int]:
    milliseconds, sequence = entry_id.split("-")
    return int(milliseconds), int(sequence)


def _is_entry_id(value: Any) -> bool:
    return isinstance(value, str) and _ENTRY_ID.fullmatch(value) is not None


class RedisStreamSource(Source[T]):
    """A source reading Redis streams, replayable by entry id.

    Exactly-once reads on restore: each stream key is one split, whose position is the plain
    data ``{"last_id": "<ms>-<seq>", "end_id": "<ms>-<seq>" or None}``; ``last_id`` is the id
    of the last entry the reader returned, so a reader built from snapshotted splits resumes
    with the entry after it. Positions live in the job's checkpoints, never in a consumer
    group: nothing is acknowledged in Redis, and any number of jobs may read the same streams.
    Stream ``i`` of ``streams`` goes to subtask ``i mod parallelism``; a subtask with several
    streams reads them with one ``XREAD``, in entry order within each stream.

    Reading starts after ``start_id`` (exclusive, as ``XREAD``; ``"0-0"`` reads everything).
    Unbounded by default: a read waits with ``XREAD BLOCK block_ms`` and asks again until an
    entry comes, and cancelling the job interrupts the wait at once; a subtask with no stream
    waits forever. With ``stop_at_end=True`` the source is bounded: a split ends at the
    stream's last entry when a reader first opens it, and later entries are not read (the end
    is kept in positions from the first returned record on, so a restored job stops there too).

    Records are ``StreamEntry(stream, entry_id, fields)`` with UTF-8 text fields, or what
    ``decode(stream, entry_id, fields)`` returns for the raw ``bytes`` field names and values.

    Entries trimmed (``MAXLEN``, ``XTRIM``, ``XDEL``) before a reader reached them are not
    read. The streams of a job are fixed by its first run: a restored job reads the splits of
    its checkpoint, and a stream added to ``streams`` later is not read (start a new job).
    """

    @overload
    def __init__(
        self: RedisStreamSource[StreamEntry],
        url: str,
        streams: Sequence[str],
        *,
        start_id: str = "0-0",
        block_ms: int = 1000,
        stop_at_end: bool = False,
    ) -> None: ...
    @overload
    def __init__(
        self,
        url: str,
        streams: Sequence[str],
        *,
        decode: Decoder[T],
        start_id: str = "0-0",
        block_ms: int = 1000,
        stop_at_end: bool = False,
    ) -> None: ...
    def __init__(
        self,
        url: str,
        streams: Sequence[str],
        *,
        decode: Decoder[Any] = decode_entry,
        start_id: str = "0-0",
        block_ms: int = 1000,
        stop_at_end: bool = False,
    ) -> None:
        _check_source_options(streams, start_id, block_ms)
        self._url = url
        self._streams = tuple(streams)
        self._decode: Decoder[T] = decode
        self._start_id = start_id
        self._block_ms = block_ms
        self._stop_at_end = stop_at_end

    @property
    def bounded(self) -> bool:
        """Whether the source stops at each stream's end (``stop_at_end``)."""
        return self._stop_at_end

    @property
    def streams(self) -> tuple[str, ...]:
        """The stream keys, one split each."""
        return self._streams

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        """Return one split per stream, positioned at ``start_id``; the end is set on open."""
        if parallelism < 1:
            raise ValueError(f"parallelism must be at least 1; got {parallelism}")
        position = {"last_id": self._start_id, "end_id": None}
        return [SourceSplit(stream, dict(position)) for stream in self._streams]

    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[T]:
        """Return a reader of ``splits``, each resumed after its ``last_id``."""
        cursors = [self._cursor(split, context) for split in splits]
        options = _ReadOptions(self._url, self._block_ms, bounded=self._stop_at_end)
        return _StreamReader(options, self._decode, cursors)

    def _cursor(self, split: SourceSplit, context: SourceContext) -> _StreamCursor:
        position = split.position
        if split.split_id not in self._streams or not _is_stream_position(position):
            raise InvalidSplit(
                f"Redis stream source '{context.uid}' (subtask {context.subtask_index + 1}/"
                f"{context.parallelism}) cannot resume split '{split.split_id}' from "
                f"{position!r}: expected one of the streams {list(self._streams)} at "
                "{'last_id': '<ms>-<seq>', 'end_id': '<ms>-<seq>' or None}; restore from a "
                "checkpoint of this same source"
            )
        return _StreamCursor(split.split_id, position["last_id"], position["end_id"])

    def __repr__(self) -> str:
        end = " stop_at_end" if self._stop_at_end else ""
        return f"<RedisStreamSource streams={list(self._streams)} start_id={self._start_id}{end}>"


def _check_source_options(streams: Sequence[str], start_id: str, block_ms: int) -> None:
    if isinstance(streams, str) or not streams:
        raise ValueError(f"streams must be a non-empty list of stream keys; got {streams!r}")
    if len(set(streams)) != len(streams):
        raise ValueError(f"streams must not repeat a key: each is one split; got {streams!r}")
    if not _is_entry_id(start_id):
        raise ValueError(
            f"start_id must be an entry id '<ms>-<seq>', such as '0-0'; got {start_id!r} "
            "(a relative id such as '$' cannot be replayed)"
        )
    if block_ms < 1:
        raise ValueError(f"block_ms must be at least 1 millisecond; got {block_ms}")


def _is_stream_position(position: Any) -> bool:
    if not isinstance(position, dict) or set(position) != {"last_id", "end_id"}:
        return False
    end_id = position["end_id"]
    return _is_entry_id(position["last_id"]) and (end_id is None or _is_entry_id(end_id))


@dataclass(frozen=True, slots=True)
class _ReadOptions:
    url: str
    block_ms: int
    bounded: bool


@dataclass(slots=True)
class _StreamCursor:
    """How far a reader got in one stream."""

    stream: str
    last_id: str
    end_id: str | None

    @property
    def ended(self) -> bool:
        return self.end_id is not None and _parse_id(self.last_id) >= _parse_id(self.end_id)

    def beyond_end(self, entry_id: str) -> bool:
        return self.end_id is not None and _parse_id(entry_id) > _parse_id(self.end_id)

    def finish(self) -> None:
        # Nothing is left up to the end (it was trimmed, or read): the split has ended.
        assert self.end_id is not None, f"stream '{self.stream}' has no end to finish at"
        self.last_id = max(self.last_id, self.end_id, key=_parse_id)

    def to_split(self) -> SourceSplit:
        return SourceSplit(self.stream, {"last_id": self.last_id, "end_id": self.end_id})


RawEntries = list[tuple[bytes, dict[bytes, bytes]]]


class _StreamReader(SourceReader[T]):
    """Reads its streams with one XREAD per read, each after its cursor's ``last_id``."""

    def __init__(
        self, options: _ReadOptions, decode: Decoder[T], cursors: list[_StreamCursor]
    ) -> None:
        self._options = options
        self._decode = decode
        self._cursors = cursors
        self._client: Redis | None = None

    async def open(self) -> None:
        """Connect; a bounded reader fixes the end of each split that has none yet."""
        timeout = self._options.block_ms / 1000 + _SOCKET_MARGIN
        self._client = Redis.from_url(self._options.url, socket_timeout=timeout)
        if self._options.bounded:
            for cursor in self._cursors:
                if cursor.end_id is None:
                    cursor.end_id = await self._last_id(cursor.stream)

    async def read(self, max_records: int) -> list[T]:
        """Return 1 to ``max_records`` entries, waiting for some; ``[]`` once all ended."""
        if max_records < 1:
            raise ValueError(f"max_records must be at least 1; got {max_records}")
        while True:
            active = [cursor for cursor in self._cursors if not cursor.ended]
            if not active:
                if self._options.bounded:
                    return []
                await anyio.sleep_forever()  # an unbounded reader without streams never ends
            if records := await self._read_from(active, max_records):
                return records

    def snapshot_splits(self) -> list[SourceSplit]:
        """Return every stream with the id of the last entry returned."""
        return [cursor.to_split() for cursor in self._cursors]

    async def close(self) -> None:
        """Disconnect."""
        if self._client is not None:
            await self._client.aclose()

    async def _read_from(self, active: list[_StreamCursor], max_records: int) -> list[T]:
        block = None if self._options.bounded else self._options.block_ms
        response = await self._connected().xread(
            {cursor.stream: cursor.last_id for cursor in active},
            count=max(1, max_records // len(active)),
            block=block,
        )
        entries = _entries_by_stream(response)
        records: list[T] = []
        for cursor in active:
            room = max_records - len(records)
            if room > 0:
                records += self._deliver(cursor, entries.get(cursor.stream.encode(), []), room)
        return records

    def _deliver(self, cursor: _StreamCursor, entries: RawEntries, room: int) -> list[T]:
        # A bounded split without entries after its cursor has none left up to its end.
        if self._options.bounded and not entries:
            cursor.finish()
        records = []
        for raw_id, fields in entries[:room]:
            entry_id = raw_id.decode()
            if cursor.beyond_end(entry_id):
                cursor.finish()
                break
            records.append(self._decode(cursor.stream, entry_id, fields))
            cursor.last_id = entry_id
        return records

    async def _last_id(self, stream: str) -> str:
        newest: Any = await self._connected().xrevrange(stream, count=1)
        return bytes(newest[0][0]).decode() if newest else "0-0"

    def _connected(self) -> Redis:
        assert self._client is not None, "read() before open()"
        return self._client

    def __repr__(self) -> str:
        splits = ", ".join(f"{c.stream}@{c.last_id}/{c.end_id or '...'}" for c in self._cursors)
        return f"<RedisStreamReader [{splits}]>"


def _entries_by_stream(response: Any) -> dict[bytes, RawEntries]:
    # XREAD answers [[stream, [(id, fields), ...]], ...] (RESP2) or {stream: [...]} (RESP3),
    # or nothing when BLOCK timed out.
    pairs = response.items() if isinstance(response, dict) else response or []
    return {bytes(name): list(entries) for name, entries in pairs}


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
        """Return the writer of one subtask, continuing its lineage if there is one."""
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
