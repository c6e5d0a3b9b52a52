"""RocksDB value formats of keyed state: a header (deadline or none), then the pickled payload.

Every stored value starts with one byte: ``0`` for a value without a deadline, ``1`` for one
followed by its deadline (8 bytes, a clock time). A state with a TTL stamps what it writes;
values restored from a snapshot carry no deadline, and such a state reads them as expiring
``ttl`` after the restore. The payload is ``pickle`` (protocol 5) of the value; a list is
the concatenation of its items' pickles, each behind its length, so that ``add`` appends
bytes without unpickling the items already stored. Values are pickled because they are the
job's own working state, as in its checkpoints: only this job's code ever reads them.
"""

from __future__ import annotations

import functools
import pickle
import struct
from collections.abc import Callable, Iterable
from typing import Any, Final

__all__ = [
    "ABSENT",
    "PLAIN",
    "dump",
    "dump_items",
    "load",
    "load_items",
    "plain",
    "split",
    "stamped",
    "stored",
]


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final[Any] = _Absent()
"""The value of a cached entry whose key holds nothing (never stored, cleared, or expired)."""

PLAIN = b"\x00"
"""The header of a value stored without a deadline."""
_STAMPED = b"\x01"
_DEADLINE = struct.Struct(">d")
_LENGTH = struct.Struct(">I")
_HEADER = 1 + _DEADLINE.size


def plain(payload: bytes) -> bytes:
    """Return ``payload`` stored without a deadline."""
    return PLAIN + payload


def stamped(payload: bytes, deadline: float) -> bytes:
    """Return ``payload`` stored to expire at the clock time ``deadline``."""
    return _STAMPED + _DEADLINE.pack(deadline) + payload


def stored(value: Any, deadline: float | None, payload: Callable[[Any], bytes]) -> bytes | None:
    """Return what RocksDB stores for ``value`` (its ``payload``, behind its header).

    ``None`` for ``ABSENT``: the key is deleted.
    """
    if value is ABSENT:
        return None
    return PLAIN + payload(value) if deadline is None else stamped(payload(value), deadline)


def split(stored: bytes) -> tuple[float | None, bytes]:
    """Return the deadline (``None`` if none) and the payload of a stored value."""
    if stored[:1] == PLAIN:
        return None, stored[1:]
    return _DEADLINE.unpack_from(stored, 1)[0], stored[_HEADER:]


dump: Callable[[Any], bytes] = functools.partial(pickle.dumps, protocol=5)
"""Return the payload of one value (no wrapper function: it runs for every write)."""

load: Callable[[bytes], Any] = pickle.loads
"""Return the value of a payload written by ``dump``."""


def dump_items(items: Iterable[Any]) -> bytes:
    """Return the payload of list items; payloads of two lists concatenate to their sum."""
    parts: list[bytes] = []
    for item in items:
        data = pickle.dumps(item, protocol=5)
        parts += (_LENGTH.pack(len(data)), data)
    return b"".join(parts)


def load_items(payload: bytes) -> list[Any]:
    """Return the list of items a ``dump_items`` payload (or a concatenation) holds."""
    view = memoryview(payload)
    items, offset, end = [], 0, len(payload)
    while offset < end:
        start = offset + _LENGTH.size
        offset = start + _LENGTH.unpack_from(view, offset)[0]
        items.append(pickle.loads(view[start:offset]))
    return items
