"""The payload codec: channel items as frame payloads, and back ☐.

A batch of records is one ``DATA`` frame: the list pickled with protocol 5, so records
may be any picklable Python objects and come out equal and of the same types. An in-band
event (barrier, watermark, watermark status, end of input) is one ``EVENT`` frame, and an
unaligned barrier sent first one ``PRIORITY`` frame, both pickled too. Pickle runs code
when read, so a connection unpickles nothing before its peer has shown the job's token
(``HELLO``); bench/transport.py measures the codec against marshal (faster, but it turns
buffers into ``bytes`` and refuses other types, so it is not used).
"""

from __future__ import annotations

import pickle
import struct
from typing import Any

from lockgate.engine.events import ChannelItem, CheckpointBarrier
from lockgate.engine.runtime.network.transport.frames import FrameKind

__all__ = [
    "PROTOCOL_VERSION",
    "decode_credit",
    "decode_item",
    "encode_credit",
    "encode_item",
    "encode_priority",
]

PROTOCOL_VERSION = 1
"""The data plane's version, checked in ``HELLO``: both ends must speak the same one."""

_CREDIT = struct.Struct("!QQ")
_PICKLE = 5


def encode_item(item: ChannelItem) -> tuple[FrameKind, bytes]:
    """Return the frame kind and payload of a channel item (a batch or an event)."""
    kind = FrameKind.DATA if type(item) is list else FrameKind.EVENT
    return kind, pickle.dumps(item, protocol=_PICKLE)


def encode_priority(barrier: CheckpointBarrier) -> bytes:
    """Return the payload of a barrier sent ahead of its channel's queued items."""
    return pickle.dumps(barrier, protocol=_PICKLE)


def decode_item(payload: bytes) -> Any:
    """Return the batch or event a ``DATA``, ``EVENT`` or ``PRIORITY`` payload holds."""
    return pickle.loads(payload)  # only after the peer showed the job's token (HELLO)


def encode_credit(records: int, size: int) -> bytes:
    """Return the payload of a credit: ``records`` records and ``size`` bytes more."""
    return _CREDIT.pack(records, size)


def decode_credit(payload: bytes) -> tuple[int, int]:
    """Return the records and bytes a ``CREDIT`` payload grants."""
    records, size = _CREDIT.unpack(payload)
    return records, size
