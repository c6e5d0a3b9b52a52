"""RocksDB key layout of keyed state: key group, state id, and a deterministic key encoding.

Every entry of the RocksDB keyed state backend lives under::

    key group (2 bytes, big-endian) | state id (2 bytes, big-endian) | key frame [| user key]

The key frame is the encoded key behind its length (4 bytes, big-endian), so the entries of one
key (a map state's one entry per user key) share a prefix that no other key's entries start
with. The user key of a map entry is encoded the same way, without a frame (it ends the key).

Keys are encoded so that equal keys give equal bytes, whatever their type says: ``True``,
``1`` and ``1.0`` are one key (as in a dict and in ``stable_hash``), subclasses of str, bytes,
int, float and tuple (enums, named tuples) encode as the built-in value they equal, and those
values, ``None`` and tuples of them are msgpack-encoded (deterministic). A decoded key is that
built-in value. Any other key (a map state's user key may be any hashable object) is pickled:
such keys must pickle to equal bytes whenever they are equal — true of frozen dataclasses of
the types above, not of frozensets or sets, whose pickles follow their iteration order.
"""

from __future__ import annotations

import pickle
from typing import Any

import msgpack  # type: ignore[import-untyped]

from lockgate.engine.state.key_groups import key_group_for

__all__ = [
    "KeyCodec",
    "decode_key",
    "encode_key",
    "frame",
    "prefix_end",
    "state_id_bytes",
    "unframe",
]

_MSGPACK = b"m"
_PICKLE = b"p"
_FRAME_LENGTH = 4
_CACHE_LIMIT = 16_384


def encode_key(key: Any) -> bytes:
    """Return the deterministic bytes of ``key``: equal keys give equal bytes."""
    kind = type(key)
    canonical = key if kind is str or kind is int else _canonical(key)
    try:
        packed: bytes = msgpack.packb(canonical, use_bin_type=True)
    except (TypeError, OverflowError, ValueError):  # other types, ints past 64 bits, surrogates
        return _PICKLE + pickle.dumps(canonical, protocol=5)
    return _MSGPACK + packed


def decode_key(data: bytes) -> Any:
    """Return the key ``encode_key`` encoded as ``data`` (as the built-in value it equals)."""
    body = memoryview(data)[1:]
    if data[:1] == _MSGPACK:
        return msgpack.unpackb(body, use_list=False, raw=False, strict_map_key=False)
    return pickle.loads(body)


def frame(encoded: bytes) -> bytes:
    """Return ``encoded`` behind its length, so that no other frame starts with it."""
    return len(encoded).to_bytes(_FRAME_LENGTH, "big") + encoded


def unframe(data: bytes, offset: int) -> tuple[bytes, int]:
    """Return the encoded key of the frame at ``offset`` of ``data``, and where it ends."""
    start = offset + _FRAME_LENGTH
    end = start + int.from_bytes(data[offset:start], "big")
    return data[start:end], end


def state_id_bytes(state_id: int) -> bytes:
    """Return the two bytes of a state id, as they follow the key group."""
    return state_id.to_bytes(2, "big")


def prefix_end(prefix: bytes) -> bytes:
    """Return the first key after every key that starts with ``prefix`` (an upper bound)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        raise ValueError("a prefix of 0xff bytes only has no upper bound")
    return stripped[:-1] + bytes([stripped[-1] + 1])


class KeyCodec:
    """Turns keys into the key group and key frame their RocksDB entries start with.

    Equal keys always give equal bytes (see the module docstring). The last 16,384 keys
    located are remembered, so a hot key's stable hash is computed once, and the memory it
    costs stays bounded however many keys the state holds.
    """

    __slots__ = ("_cache", "max_parallelism")

    def __init__(self, max_parallelism: int) -> None:
        if max_parallelism < 1:
            raise ValueError(f"max_parallelism must be at least 1; got {max_parallelism}")
        self.max_parallelism = max_parallelism
        self._cache: dict[Any, tuple[bytes, bytes]] = {}

    def locate(self, key: Any) -> tuple[bytes, bytes]:
        """Return the key group (2 bytes) and the key frame of ``key``."""
        located = self._cache.get(key)
        if located is None:
            located = self._locate(key)
        return located

    def _locate(self, key: Any) -> tuple[bytes, bytes]:
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        group = key_group_for(key, self.max_parallelism).to_bytes(2, "big")
        located = self._cache[key] = (group, frame(encode_key(key)))
        return located

    def __repr__(self) -> str:
        return f"<KeyCodec max_parallelism={self.max_parallelism} cached={len(self._cache)}>"


def _canonical(key: Any) -> Any:
    # The built-in value a key equals: one encoding for 1, 1.0 and True, and for subclasses.
    if isinstance(key, bool):
        return int(key)
    if isinstance(key, float):
        return int(key) if key.is_integer() else float(key)
    if isinstance(key, tuple):
        return tuple(_canonical(part) for part in key)
    if isinstance(key, str):
        return str.__str__(key)  # str() would call a subclass's __str__ (an Enum's name)
    if isinstance(key, int | bytes):
        return int(key) if isinstance(key, int) else bytes(key)
    return key
