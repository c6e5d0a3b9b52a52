"""OperatorSnapshot: the state of one operator subtask at one checkpoint, and its encoding.

Checkpoints encode snapshots with pickle (protocol 5): a checkpoint is read back only by the
job that wrote it, with the same code. Savepoints, which people keep and move between
versions, get a canonical format of their own (and never hold channel state: they are
aligned).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any

from lockgate.engine.checkpointing.channel_state import ChannelRecords, holds_records
from lockgate.engine.checkpointing.native_state import NativeKeyedState
from lockgate.engine.errors import CorruptCheckpoint
from lockgate.engine.state.gil_share import sharing_the_gil

__all__ = [
    "ASYNC_INPUTS_STATE",
    "SINK_STATE",
    "SPLITS_STATE",
    "OperatorSnapshot",
    "decode_snapshot",
    "encode_snapshot",
    "encode_snapshot_measured",
]

SPLITS_STATE = "__splits__"
"""The list state under which a source subtask stores its ``SourceSplit`` positions."""

SINK_STATE = "__sink__"
"""The list state under which a sink writer stores what ``snapshot_state`` returned."""

ASYNC_INPUTS_STATE = "__async_inputs__"
"""The list state under which an ``async_map`` subtask stores the records of its calls in
flight (and of results not yet emitted), to call them again on restore."""

_FORMAT = "lockgate-operator-snapshot/5"  # 3: kinds, deltas; 4: native; 5: channel state
_FORMAT_4 = "lockgate-operator-snapshot/4"
_FORMAT_3 = "lockgate-operator-snapshot/3"


@dataclass(frozen=True)
class OperatorSnapshot:
    """The state of one subtask of the operator ``uid``, taken at one checkpoint.

    ``keyed`` maps key group -> state name -> key -> value; every key sits in the key group
    its hash assigns it, so keyed state moves between subtasks in whole key groups.
    ``lists`` are list states split evenly on rescaling, ``unions`` list states every
    subtask receives in full, and ``broadcast`` maps state name -> key -> value, identical
    in every subtask. ``kinds`` maps each keyed state name to the kind it was declared with
    (``kind_of``: value, list, map, reducing, aggregating), so a restore can refuse a job
    that declares it as another kind. An incremental snapshot (``is_delta``) holds in
    ``keyed`` only the entries changed since the snapshot it builds on, and in ``deleted``
    the keys removed since (key group -> state name -> keys); its other state is whole.
    A snapshot with ``native`` keyed state (RocksDB's files, from an incremental checkpoint)
    has empty ``keyed``: a restore reads the files back into ``keyed`` first.
    ``input_channels`` and ``output_channels`` are the channel state of an unaligned
    checkpoint (see ``channel_state``): stored under the uid of the chain's head (what the
    subtask read) and of its tail (what it sent), they restore only into the same subtask.
    The snapshot is a copy: nothing the running operator does changes it.
    """

    uid: str
    keyed: dict[int, dict[str, dict[Any, Any]]] = field(default_factory=dict)
    lists: dict[str, list[Any]] = field(default_factory=dict)
    unions: dict[str, list[Any]] = field(default_factory=dict)
    broadcast: dict[str, dict[Any, Any]] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    deleted: dict[int, dict[str, list[Any]]] = field(default_factory=dict)
    is_delta: bool = False
    native: NativeKeyedState | None = None
    input_channels: ChannelRecords = field(default_factory=dict)
    output_channels: ChannelRecords = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        """Whether the snapshot holds no value at all (empty tables and lists count as none).

        An incremental snapshot is never empty, even without changes: it stands for the
        whole state of its base plus its changes, and a subtask writes nothing for an empty
        snapshot, which a restore reads as no state at all.
        """
        if self.native is not None or self.is_delta:
            return False
        keyed_values = any(table for states in self.keyed.values() for table in states.values())
        collections = (*self.lists.values(), *self.unions.values(), *self.broadcast.values())
        return not keyed_values and not any(collections) and not self.has_channel_state

    @property
    def has_channel_state(self) -> bool:
        """Whether the snapshot holds in-flight records of an unaligned checkpoint."""
        return holds_records(self.input_channels) or holds_records(self.output_channels)


def encode_snapshot(snapshot: OperatorSnapshot) -> bytes:
    """Encode ``snapshot`` to bytes with pickle protocol 5 (see ``encode_snapshot_measured``)."""
    return encode_snapshot_measured(snapshot)[0]


def encode_snapshot_measured(snapshot: OperatorSnapshot) -> tuple[bytes, int]:
    """Encode ``snapshot`` with pickle protocol 5; return the bytes and its channel state's.

    Keyed state is pickled one key group at a time: one ``pickle.dumps`` holds the GIL for
    as long as it runs, so encoding a million keys in a single call from a worker thread
    would stall the event loop for its whole duration; per key group, each call is short.
    Channel state is pickled on its own, which measures the in-flight bytes persisted.
    """
    groups = {
        group: pickle.dumps(states, protocol=5)
        for group, states in sharing_the_gil(snapshot.keyed.items(), every=1)
    }
    fields = (snapshot.uid, groups, snapshot.lists, snapshot.unions, snapshot.broadcast)
    delta = (snapshot.kinds, snapshot.deleted, snapshot.is_delta)
    native = None if snapshot.native is None else snapshot.native.to_plain()
    channels = b""
    if snapshot.has_channel_state:
        in_flight = (snapshot.input_channels, snapshot.output_channels)
        channels = pickle.dumps(in_flight, protocol=5)
    encoded = pickle.dumps((_FORMAT, *fields, *delta, native, channels), protocol=5)
    return encoded, len(channels)


def decode_snapshot(data: bytes, *, location: str = "<bytes>") -> OperatorSnapshot:
    """Decode bytes written by ``encode_snapshot``.

    Raises:
        CorruptCheckpoint: naming ``location`` when the bytes are not an encoded snapshot.
    """
    try:
        # Unpickling runs code; checkpoints are read only by the job that wrote them.
        decoded = pickle.loads(data)
    except Exception as error:
        raise CorruptCheckpoint(location, f"it cannot be unpickled ({error!r})") from error
    _, uid, groups, lists, unions, broadcast, kinds, deleted, is_delta, native, channels = _fields(
        decoded, location
    )
    try:
        keyed = {
            group: pickle.loads(states)
            for group, states in sharing_the_gil(groups.items(), every=1)
        }
        inputs, outputs = pickle.loads(channels) if channels else ({}, {})
    except Exception as error:
        raise CorruptCheckpoint(location, f"a part cannot be unpickled ({error!r})") from error
    return OperatorSnapshot(
        uid,
        keyed,
        lists,
        unions,
        broadcast,
        kinds,
        deleted,
        is_delta,
        native=native,
        input_channels=inputs,
        output_channels=outputs,
    )


def _fields(decoded: Any, location: str) -> tuple[Any, ...]:
    # Format 3 had no native keyed state and format 4 no channel state: both read as 5.
    if _is_format(decoded, _FORMAT_3, 9):
        decoded = (_FORMAT, *decoded[1:], None, b"")
    elif _is_format(decoded, _FORMAT_4, 10):
        decoded = (_FORMAT, *decoded[1:], b"")
    elif not _is_format(decoded, _FORMAT, 11):
        raise CorruptCheckpoint(location, "it does not hold an operator snapshot")
    native = decoded[-2]
    if native is None:
        return tuple(decoded)
    return (*decoded[:-2], NativeKeyedState.from_plain(native, location=location), decoded[-1])


def _is_format(decoded: Any, name: str, length: int) -> bool:
    return isinstance(decoded, tuple) and len(decoded) == length and decoded[0] == name
