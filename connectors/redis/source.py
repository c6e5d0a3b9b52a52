"""RedisStreamSource: Redis streams replayable by entry id (the ``redis`` extra)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar, overload

import anyio
from redis.asyncio import Redis

from lockgate.connectors.errors import InvalidSplit, UndecodableInput
from lockgate.engine import TypeCodec
from lockgate.engine.io.asyncio_only import require_asyncio
from lockgate.engine.io.sources import (
    Source,
    SourceContext,
    SourceReader,
    SourceSplit,
    SplitRecords,
)

__all__ = ["RedisStreamSource", "StreamEntry", "decode_entry"]

T = TypeVar("T")

Decoder = Callable[[str, str, dict[bytes, bytes]], T]

_ENTRY_ID = re.compile(r"\d+-\d+")
# A blocked XREAD answers after block_ms; a socket silent for this much longer is dead.
_SOCKET_MARGIN = 10.0


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


def _entry_fields(entry: StreamEntry) -> dict[str, Any]:
    return entry._asdict()


def _entry_from_fields(fields: dict[str, Any]) -> StreamEntry:
    return StreamEntry(**fields)


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

    def state_types(self) -> Sequence[TypeCodec]:
        """``StreamEntry``, stored as its fields: entries a job keeps in state can be saved.

        Split positions are plain data; the entries are not, and a job keeps them in state
        whenever a sink's transactions or an operator hold them before a savepoint.
        """
        return (TypeCodec(StreamEntry, "lockgate.StreamEntry", _entry_fields, _entry_from_fields),)

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        """Return one split per stream, positioned at ``start_id``; the end is set on open."""
        if parallelism < 1:
            raise ValueError(f"parallelism must be at least 1; got {parallelism}")
        position = {"last_id": self._start_id, "end_id": None}
        return [SourceSplit(stream, dict(position)) for stream in self._streams]

    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[T]:
        """Return a reader of ``splits``, each resumed after its ``last_id``.

        Raises:
            AsyncioRequired: the job runs on trio; ``redis.asyncio`` needs asyncio.
        """
        require_asyncio("Redis stream source", "redis.asyncio", context=context)
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
        self._told_finished: set[str] = set()

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
        while runs := await self.read_splits(max_records):
            if records := [record for run in runs for record in run.records]:
                return records
        return []

    async def read_splits(self, max_records: int) -> list[SplitRecords[T]]:
        """``read``'s entries by stream; a stream that reached its end says it finished.

        Each stream is a split with a watermark of its own: one without entries holds back
        its subtask's watermark, unless the strategy has ``with_idleness``.
        """
        if max_records < 1:
            raise ValueError(f"max_records must be at least 1; got {max_records}")
        while True:
            if finished := self._newly_finished():
                return finished
            active = [cursor for cursor in self._cursors if not cursor.ended]
            if not active:
                if self._options.bounded:
                    return []
                await anyio.sleep_forever()  # an unbounded reader without streams never ends
            if runs := await self._read_from(active, max_records):
                return runs

    def snapshot_splits(self) -> list[SourceSplit]:
        """Return every stream with the id of the last entry returned."""
        return [cursor.to_split() for cursor in self._cursors]

    async def close(self) -> None:
        """Disconnect."""
        if self._client is not None:
            await self._client.aclose()

    async def _read_from(
        self, active: list[_StreamCursor], max_records: int
    ) -> list[SplitRecords[T]]:
        block = None if self._options.bounded else self._options.block_ms
        response = await self._connected().xread(
            {cursor.stream: cursor.last_id for cursor in active},
            count=max(1, max_records // len(active)),
            block=block,
        )
        entries = _entries_by_stream(response)
        runs: list[SplitRecords[T]] = []
        room = max_records
        for cursor in active:
            if room <= 0:
                break
            records = self._deliver(cursor, entries.get(cursor.stream.encode(), []), room)
            room -= len(records)
            if cursor.ended:
                self._told_finished.add(cursor.stream)
            if records or cursor.ended:
                runs.append(SplitRecords(cursor.stream, records, finished=cursor.ended))
        return runs

    def _newly_finished(self) -> list[SplitRecords[T]]:
        # Streams that had ended before this reader opened (restored at their end).
        told = self._told_finished
        ended = [c.stream for c in self._cursors if c.ended and c.stream not in told]
        told.update(ended)
        return [SplitRecords(stream, [], finished=True) for stream in ended]

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
