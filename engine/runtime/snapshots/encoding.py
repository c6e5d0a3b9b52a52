"""What a subtask's asynchronous snapshot part runs in its worker thread: grouping, encoding.

Each function here may take long (linear in the state) and runs off the event loop, unless
the state is small; none touches the event loop's objects, other than reading the captures
and snapshots, which never change while their versions are held.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

from lockgate.engine.checkpointing.snapshots import OperatorSnapshot
from lockgate.engine.errors import SavepointEncodingError, StateEncodingError
from lockgate.engine.runtime.snapshots.capture import StateCapture
from lockgate.engine.savepoints.values import ValueCodec
from lockgate.engine.state import KeyedStateSnapshot
from lockgate.engine.state.gil_share import sharing_the_gil

__all__ = ["GIL_SHARED_ABOVE", "Encoder", "detach_all", "encode_all", "unmeasured"]

GIL_SHARED_ABOVE = 20_000
"""Keyed entries above which a snapshot is encoded in a worker thread, sharing the GIL.

Up to it a snapshot is encoded on the event loop (a few milliseconds): handing it to a
worker thread while the loop is busy costs more, because the thread then waits for the GIL
at every step and the two threads trade it thousands of times.
"""

Encoder = Callable[[OperatorSnapshot], tuple[bytes, int]]
"""Encodes a snapshot; returns the bytes and how many of them are in-flight records."""


def detach_all(keyed: dict[str, KeyedStateSnapshot]) -> dict[str, KeyedStateSnapshot]:
    """Return a ``detached`` copy of each snapshot, by operator uid."""
    return {uid: snapshot.detached() for uid, snapshot in keyed.items()}


def unmeasured(
    encode: Callable[[OperatorSnapshot, ValueCodec], bytes],
    codec: ValueCodec,
    snapshot: OperatorSnapshot,
) -> tuple[bytes, int]:
    """Encode ``snapshot`` with ``encode`` and ``codec``; no in-flight bytes are measured."""
    return encode(snapshot, codec), 0


def encode_all(
    captures: list[StateCapture],
    max_parallelism: int,
    encode: Encoder,
    bases: dict[str, KeyedStateSnapshot],
) -> list[tuple[str, tuple[bytes, int]]]:
    """Materialize (against ``bases``, by uid) and encode every capture; skip empty ones.

    Raises:
        StateEncodingError: an operator's state cannot be pickled.
    """
    # In a worker thread this is one call, and the captures are taken out of the list so
    # that their large copies are freed there, not on the event loop.
    encoded = []
    while captures:
        capture = captures.pop()
        snapshot = capture.materialize(max_parallelism, bases.get(capture.uid))
        if not snapshot.is_empty:
            encoded.append((capture.uid, _encoded(encode, snapshot)))
        _free_by_key_group(snapshot.keyed)
        del capture, snapshot
    return encoded


def _free_by_key_group(groups: dict[int, dict[str, dict[Any, Any]]]) -> None:
    # Freeing a million entries in one go holds the GIL for about 10 ms; by key group, the
    # event loop gets it between two groups. Small state is freed at once, as it is encoded.
    entries = sum(len(table) for states in groups.values() for table in states.values())
    if entries <= GIL_SHARED_ABOVE:
        return
    for _ in sharing_the_gil(range(len(groups)), every=4):
        groups.popitem()


def _encoded(encode: Encoder, snapshot: OperatorSnapshot) -> tuple[bytes, int]:
    try:
        return encode(snapshot)
    except SavepointEncodingError:
        raise  # says what to register; the savepoint fails and the job runs on
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        raise StateEncodingError(
            f"operator '{snapshot.uid}' keeps state that cannot be pickled into a checkpoint: "
            f"{error!r}; keep picklable values in state (classes defined at module level, no "
            "open files, locks or lambdas)"
        ) from error
