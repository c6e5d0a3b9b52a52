"""Key groups: which key group a key belongs to, and which subtask owns a key group.

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
from typing import Any, cast

__all__ = [
    "key_group_for",
    "key_group_range",
    "stable_hash",
    "subtask_for_key_group",
]

_MASK32 = 0xFFFFFFFF


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
