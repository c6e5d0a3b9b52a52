"""The canonical savepoint state file: one operator subtask's ``OperatorSnapshot``.

A file is a 9-byte header, ``b"LGSAVEPT"`` then the format version as one byte, followed by
MessagePack values (``ValueCodec``) back to back::

    {"uid": str, "kinds": {state name: kind}, "records": n}     the operator header
    ["keyed", key group, state name, [[key, value], ...]]       one per key group and state
    ["list", state name, [value, ...]]                          list state (split on rescale)
    ["union", state name, [value, ...]]                         union list state
    ["broadcast", state name, [[key, value], ...]]              broadcast state

followed by exactly ``n`` records. Tables are lists of pairs, so keys need not be strings.
Each record is encoded by its own codec call (keyed state one key group at a time), so a
worker thread encoding a large snapshot never holds the GIL for long. The values the engine
itself stores (``SourceSplit``; ``SecondInput``, a join window's right records) are
registered under stable names in every codec used here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.errors import SavepointEncodingError, SavepointFormatError
from lockgate.engine.functions.two_inputs import SecondInput
from lockgate.engine.io.sources import SourceSplit
from lockgate.engine.savepoints.values import TypeCodec, ValueCodec

__all__ = [
    "ENGINE_TYPES",
    "FORMAT_VERSION",
    "MAGIC",
    "decode_savepoint_state",
    "encode_savepoint_state",
    "is_savepoint_state",
]

MAGIC = b"LGSAVEPT"
"""The bytes every savepoint state file starts with."""

FORMAT_VERSION = 1
"""The savepoint state format version this lockgate writes and reads."""

ENGINE_TYPES = (
    TypeCodec.for_dataclass(SourceSplit, "lockgate.SourceSplit"),
    TypeCodec.for_dataclass(SecondInput, "lockgate.SecondInput"),  # in a join's windows
)
"""Types the engine stores in snapshots itself; every savepoint codec knows them."""

_HEADER_SIZE = len(MAGIC) + 1


def is_savepoint_state(data: bytes) -> bool:
    """Whether ``data`` is a canonical savepoint state file (and not a pickled checkpoint)."""
    return data.startswith(MAGIC)


def encode_savepoint_state(snapshot: OperatorSnapshot, codec: ValueCodec) -> bytes:
    """Encode ``snapshot`` in the canonical format, its values with ``codec``.

    Raises:
        SavepointEncodingError: a value cannot be encoded; the message names the operator
            uid, the state (and key group) and the value's type.
    """
    if snapshot.has_channel_state:  # the engine never takes a savepoint unaligned
        raise ValueError(f"operator '{snapshot.uid}': a savepoint holds no in-flight records")
    codec = _with_engine_types(codec)
    records = [_encode(codec, snapshot.uid, where, record) for where, record in _records(snapshot)]
    header = {"uid": snapshot.uid, "kinds": snapshot.kinds, "records": len(records)}
    version = bytes([FORMAT_VERSION])
    return b"".join((MAGIC, version, _encode(codec, snapshot.uid, "header", header), *records))


def decode_savepoint_state(data: bytes, codec: ValueCodec, *, location: str) -> OperatorSnapshot:
    """Decode a file written by ``encode_savepoint_state``, its values with ``codec``.

    Raises:
        SavepointFormatError: naming ``location``, when the file is not canonical savepoint
            state, was written by a newer lockgate, is damaged, or holds values ``codec``
            refuses to decode (a pickled value, an unregistered type).
    """
    try:
        _check_header(data)
        values = _with_engine_types(codec).decode_sequence(memoryview(data)[_HEADER_SIZE:])
        return _snapshot(values)
    except SavepointFormatError as error:
        raise SavepointFormatError(f"savepoint state file {location}: {error}") from error


def _with_engine_types(codec: ValueCodec) -> ValueCodec:
    known = {registered.cls for registered in codec.types}
    missing = [engine for engine in ENGINE_TYPES if engine.cls not in known]
    if not missing:
        return codec
    types = (*codec.types, *missing)
    return ValueCodec(types, allow_pickle=codec.allow_pickle, strict=codec.strict)


def _records(snapshot: OperatorSnapshot) -> Iterator[tuple[str, list[Any]]]:
    for group, states in snapshot.keyed.items():
        for name, table in states.items():
            yield f"state '{name}' (key group {group})", ["keyed", group, name, _pairs(table)]
    for name, values in snapshot.lists.items():
        yield f"list state '{name}'", ["list", name, values]
    for name, values in snapshot.unions.items():
        yield f"union state '{name}'", ["union", name, values]
    for name, table in snapshot.broadcast.items():
        yield f"broadcast state '{name}'", ["broadcast", name, _pairs(table)]


def _pairs(table: dict[Any, Any]) -> list[list[Any]]:
    return [[key, value] for key, value in table.items()]


def _encode(codec: ValueCodec, uid: str, where: str, record: Any) -> bytes:
    try:
        return codec.encode(record)
    except SavepointEncodingError as error:
        raise SavepointEncodingError(f"operator '{uid}', {where}: {error}") from error


def _check_header(data: bytes) -> None:
    if not is_savepoint_state(data):
        raise SavepointFormatError(
            f"it is not savepoint state (it does not start with {MAGIC!r}); a pickled "
            "checkpoint file, perhaps"
        )
    if len(data) < _HEADER_SIZE:
        raise SavepointFormatError("it ends before its format version: the file is truncated")
    version = data[len(MAGIC)]
    if version > FORMAT_VERSION:
        raise SavepointFormatError(
            f"it has format version {version}, written by a newer lockgate; this lockgate "
            f"reads version {FORMAT_VERSION}; read or restore it with a lockgate that knows "
            f"version {version}"
        )
    if version != FORMAT_VERSION:
        raise SavepointFormatError(
            f"it has format version {version}, which no lockgate writes; the file is damaged"
        )


def _snapshot(values: Iterator[Any]) -> OperatorSnapshot:
    match next(values, None):
        case {"uid": str() as uid, "kinds": dict() as kinds, "records": int() as count}:
            snapshot = OperatorSnapshot(uid, kinds=kinds)
        case _:
            raise SavepointFormatError("it lacks its operator header")
    read = 0
    for record in values:
        _add(snapshot, record)
        read += 1
    if read != count:
        raise SavepointFormatError(f"its header announces {count} records; it holds {read}")
    return snapshot


def _add(snapshot: OperatorSnapshot, record: Any) -> None:
    match record:
        case ["keyed", int() as group, str() as name, list() as pairs]:
            snapshot.keyed.setdefault(group, {})[name] = _table(pairs)
        case ["list", str() as name, list() as values]:
            snapshot.lists[name] = values
        case ["union", str() as name, list() as values]:
            snapshot.unions[name] = values
        case ["broadcast", str() as name, list() as pairs]:
            snapshot.broadcast[name] = _table(pairs)
        case _:
            raise SavepointFormatError(f"it holds a record of unknown shape: {record!r:.200}")


def _table(pairs: list[Any]) -> dict[Any, Any]:
    try:
        return dict(pairs)
    except (TypeError, ValueError) as error:
        raise SavepointFormatError(
            f"a table is not a list of [key, value] pairs ({error})"
        ) from error
