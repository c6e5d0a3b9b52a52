"""Checksums of checkpoint files: SHA-256, written as ``"sha256:<hex digest>"``.

The algorithm prefix lets a later version change the algorithm while still reading old files.
"""

from __future__ import annotations

import hashlib

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.errors import CorruptCheckpoint

__all__ = ["checksum_of", "verify_state"]

_ALGORITHM = "sha256"


def checksum_of(data: bytes) -> str:
    """Return the checksum of ``data`` as ``"sha256:<hex digest>"``."""
    return f"{_ALGORITHM}:{hashlib.sha256(data).hexdigest()}"


def verify_state(handle: StateHandle, data: bytes) -> bytes:
    """Return ``data`` if it has the size and checksum ``handle`` recorded, else raise.

    Raises:
        CorruptCheckpoint: naming ``handle.location`` and what differs.
    """
    if len(data) != handle.size:
        raise CorruptCheckpoint(
            handle.location, f"it holds {len(data)} bytes, {handle.size} were written"
        )
    actual = checksum_of(data)
    if actual != handle.checksum:
        raise CorruptCheckpoint(
            handle.location, f"its checksum is {actual}, {handle.checksum} was written"
        )
    return data
