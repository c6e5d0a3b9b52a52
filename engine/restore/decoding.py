"""How a restore decodes a state file: chosen by the file's bytes and its place, not by metadata.

A state file is canonical savepoint state (``LGSAVEPT``) or a pickled checkpoint file. Which
one it is shows in its first bytes; whether a pickled one may be read depends on where the
snapshot is (``trust.py``), never on the metadata's ``is_savepoint``: its checksum is one
anyone can compute, so a folder can claim to hold a checkpoint and carry any pickle.
"""

from __future__ import annotations

from collections.abc import Callable

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot, decode_snapshot
from lockgate.engine.errors import SavepointFormatError
from lockgate.engine.savepoints.format import decode_savepoint_state, is_savepoint_state
from lockgate.engine.savepoints.values import ValueCodec

__all__ = ["Decoder", "restore_decoder"]

Decoder = Callable[..., OperatorSnapshot]
"""``decoder(data, location=...)``: the snapshot a state file's bytes hold."""


def restore_decoder(codec: ValueCodec, *, savepoint: bool, may_unpickle: bool) -> Decoder:
    """Return the decoder of a restore's state files.

    Canonical files decode with ``codec`` (which unpickles values only if it allows pickle).
    A pickled file is unpickled only with ``may_unpickle`` (the job's own checkpoint, or the
    user's opt-in), and never in a ``savepoint``; otherwise it raises
    ``SavepointFormatError`` naming the file, without running any of it.
    """

    def decode(data: bytes, *, location: str) -> OperatorSnapshot:
        if savepoint or is_savepoint_state(data):
            return decode_savepoint_state(data, codec, location=location)
        if not may_unpickle:
            raise SavepointFormatError(_refusal(location))
        return decode_snapshot(data, location=location)

    return decode


def _refusal(location: str) -> str:
    return (
        f"state file {location} is pickled, as checkpoints are, but it is not in the job's "
        "checkpoint storage, so it is not one of the job's own checkpoints; it was not read, "
        "because unpickling runs code. Restore a savepoint instead, or, only if you trust "
        "every file of this snapshot, opt in with env.allow_pickle_in_savepoints()"
    )
