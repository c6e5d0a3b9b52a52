"""Partitioning: which downstream subtask receives each record.

Keys map to key groups and key groups to subtasks with Flink's formulas::

    key_group = stable_hash(key) % max_parallelism
    subtask   = key_group * parallelism // max_parallelism

``stable_hash`` gives the same number for the same key in every process and on every run
(Python's built-in ``hash()`` is salted per process, so it is never used). Key groups are the
unit in which keyed state moves when a job is rescaled.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from typing import Any, cast

__all__ = [
    "BroadcastPartitioner",
    "ForwardPartitioner",
    "KeyGroupPartitioner",
    "Partitioner",
    "RebalancePartitioner",
    "key_group_for",
    "key_group_range",
    "stable_hash",
    "subtask_for_key_group",
]

_MASK32 = 0xFFFFFFFF
_ROUTE_CACHE_LIMIT = 1 << 16


def stable_hash(key: Any) -> int:
    """Hash a key to 32 bits, identically in every process.

    Keys are str, bytes, int, float, bool, None, or tuples of these. Keys that are equal in a
    dict hash equally (``1``, ``1.0`` and ``True``); ``1`` and ``"1"`` are different keys.
    """
    return _mix(zlib.crc32(_encode(key)))


def key_group_for(key: Any, max_parallelism: int) -> int:
    """Return the key group of ``key``: its stable hash modulo ``max_parallelism``."""
    return stable_hash(key) % max_parallelism


def subtask_for_key_group(key_group: int, max_parallelism: int, parallelism: int) -> int:
    """Return the subtask that owns ``key_group`` (Flink's operator-index formula)."""
    return key_group * parallelism // max_parallelism


def key_group_range(subtask_index: int, max_parallelism: int, parallelism: int) -> range:
    """Return the contiguous key groups owned by one subtask."""
    start = (subtask_index * max_parallelism + parallelism - 1) // parallelism
    end = ((subtask_index + 1) * max_parallelism - 1) // parallelism
    return range(start, end + 1)


def _encode(key: Any) -> bytes:
    kind = type(key)
    if kind is str:
        return b"s" + cast(str, key).encode("utf-8", "surrogatepass")
    if kind is int:
        return _encode_int(key)
    if kind is tuple:
        return b"t" + b"".join(_framed(part) for part in key)
    if kind is bytes:
        return b"b" + cast(bytes, key)
    if kind is bool:
        return _encode_int(int(key))
    if kind is float:
        return _encode_float(key)
    if key is None:
        return b"n"
    return _encode_subclass(key)


def _encode_int(key: int) -> bytes:
    return b"i" + key.to_bytes((key.bit_length() + 8) // 8 or 1, "little", signed=True)


def _encode_float(key: float) -> bytes:
    return _encode_int(int(key)) if key.is_integer() else b"f" + struct.pack("<d", key)


def _encode_subclass(key: Any) -> bytes:
    # Subclasses (enums, named tuples) encode as the built-in value they are equal to;
    # str(key) would call a subclass's __str__ (an Enum member's name), so it is avoided.
    if isinstance(key, str):
        return _encode(str.__str__(key))
    if isinstance(key, int):
        return _encode_int(int(key))
    if isinstance(key, bytes):
        return _encode(bytes(key))
    if isinstance(key, float):
        return _encode_float(float(key))
    if isinstance(key, tuple):
        return _encode(tuple(key))
    raise TypeError(
        f"cannot hash key {key!r} of type {type(key).__name__} stably across processes; "
        "make the key selector return str, bytes, int, float, bool, None or a tuple of them"
    )


def _framed(part: Any) -> bytes:
    encoded = _encode(part)
    return len(encoded).to_bytes(4, "little") + encoded


def _mix(h: int) -> int:
    # MurmurHash3's finaliser: CRC32 is linear, so its low bits (the key group) need mixing.
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK32
    return h ^ (h >> 16)


class Partitioner:
    """Routes a batch of records into one buffer per downstream channel.

    ``route(records, buffers)`` appends every record to the buffer (or buffers) of the
    channels it goes to; ``buffers[i]`` feeds downstream subtask ``i``.
    """

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Append each record to the buffers of the channels it goes to."""
        raise NotImplementedError


class ForwardPartitioner(Partitioner):
    """Every record goes to the one channel of the same subtask index."""

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Append all records to the single buffer."""
        buffers[0].extend(records)


class BroadcastPartitioner(Partitioner):
    """Every record goes to every downstream subtask."""

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Append all records to every buffer."""
        for buffer in buffers:
            buffer.extend(records)


class RebalancePartitioner(Partitioner):
    """Records go round-robin over the downstream subtasks, starting where the last batch ended."""

    def __init__(self, start: int = 0) -> None:
        self._next = start

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Deal the records out in turn, one each."""
        count = len(buffers)
        for offset in range(count):
            buffers[(self._next + offset) % count].extend(records[offset::count])
        self._next = (self._next + len(records)) % count


class KeyGroupPartitioner(Partitioner):
    """Records go to the subtask that owns their key's key group.

    Routes are cached per key (the cache is cleared when it grows past 65,536 keys), so a
    key's hash is computed once while it stays hot.
    """

    def __init__(self, key_selector: Callable[[Any], Any], max_parallelism: int) -> None:
        self._key_selector = key_selector
        self._max_parallelism = max_parallelism
        self._routes: dict[Any, int] = {}

    def route(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Append each record to the buffer of the subtask owning its key group."""
        key_of = self._key_selector
        routes = self._routes
        appenders = [buffer.append for buffer in buffers]
        key = None
        try:
            for record in records:
                key = key_of(record)
                target = routes.get(key)
                if target is None:
                    target = self._learn(key, len(buffers))
                appenders[target](record)
        except TypeError:
            stable_hash(key)  # an unhashable key fails here with a message saying what to do
            raise

    def _learn(self, key: Any, parallelism: int) -> int:
        if len(self._routes) >= _ROUTE_CACHE_LIMIT:
            self._routes.clear()
        group = key_group_for(key, self._max_parallelism)
        target = self._routes[key] = subtask_for_key_group(
            group, self._max_parallelism, parallelism
        )
        return target
