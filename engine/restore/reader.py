"""read_snapshot: a savepoint or checkpoint as plain Python data, read without its job.

Savepoint state files are canonical (``format.py``) and read without running code; values
of types no ``TypeCodec`` is given for come back as ``TypedValue``. A checkpoint's state
files are pickled, and unpickling runs code, so they are read only with ``allow_pickle``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import urlsplit

from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot, decode_snapshot
from lockgate.engine.checkpointing.storage import CheckpointStorage, storage_for
from lockgate.engine.errors import SavepointFormatError
from lockgate.engine.restore.loader import read_whole
from lockgate.engine.savepoints.format import decode_savepoint_state, is_savepoint_state
from lockgate.engine.savepoints.values import TypeCodec, ValueCodec

__all__ = ["OperatorContents", "SnapshotContents", "read_metadata", "read_snapshot"]


@dataclass(frozen=True, slots=True)
class OperatorContents:
    """The state of one operator uid in a snapshot, merged over all of its subtasks.

    ``keyed`` maps state name -> key -> value over every key group and subtask, and
    ``kinds`` the kind each keyed state was declared with (pickled checkpoints do not record
    it). ``lists`` and ``unions`` concatenate the subtasks' lists in subtask order;
    ``broadcast`` (the same in every subtask) maps state name -> key -> value.
    ``key_count`` counts the distinct keys with any keyed state; ``size_bytes`` the bytes of
    the operator's state files.
    """

    uid: str
    parallelism: int
    keyed: dict[str, dict[Any, Any]]
    kinds: dict[str, str]
    lists: dict[str, list[Any]]
    unions: dict[str, list[Any]]
    broadcast: dict[str, dict[Any, Any]]
    key_count: int
    size_bytes: int


@dataclass(frozen=True, slots=True)
class SnapshotContents:
    """What a savepoint or checkpoint holds, operator by operator, as plain data.

    ``operators`` has one entry per operator uid the metadata names, with or without state.
    Nothing in it refers to the storage or the job: it can be kept, compared and printed.
    """

    location: str
    job_name: str
    checkpoint_id: int
    is_savepoint: bool
    max_parallelism: int
    operators: dict[str, OperatorContents]


async def read_metadata(location: str) -> CheckpointMetadata:
    """Read the metadata of the savepoint or checkpoint at ``location``.

    ``location`` is a ``_metadata`` file or its folder: a path (relative to the current
    folder, or absolute), a ``file://`` URL or an ``s3://`` URL (the ``s3`` extra).

    Raises:
        CheckpointStorageError: nothing readable is there (``CheckpointNotFound``,
            ``CorruptCheckpoint``, ``UnsupportedCheckpointVersion``...).
        ValueError: ``location`` has a scheme no storage reads.
    """
    location = absolute_location(location)
    return await storage_for(location).read_metadata(location)


async def read_snapshot(
    location: str, *, types: Iterable[TypeCodec] = (), allow_pickle: bool = False
) -> SnapshotContents:
    """Read every operator's state of the savepoint or checkpoint at ``location``.

    ``location`` is as for ``read_metadata``. Values of ``types`` decode to their classes;
    values of other registered types to ``TypedValue``. ``allow_pickle`` opens checkpoints
    (pickled) and pickled values in savepoints: only for snapshots you trust.

    Raises:
        SavepointFormatError: a state file is damaged, of a newer format, or pickled while
            ``allow_pickle`` is not set.
        CheckpointStorageError: as ``read_metadata``, also for each state file.
    """
    location = absolute_location(location)
    storage = storage_for(location)
    metadata = await storage.read_metadata(location)
    codec = ValueCodec(types, allow_pickle=allow_pickle, strict=False)
    operators = {
        uid: await _read_operator(uid, handles, storage, codec, metadata.max_parallelism)
        for uid, handles in metadata.operators.items()
    }
    return SnapshotContents(
        location=location,
        job_name=metadata.job_name,
        checkpoint_id=metadata.checkpoint_id,
        is_savepoint=metadata.is_savepoint,
        max_parallelism=metadata.max_parallelism,
        operators=operators,
    )


def absolute_location(location: str) -> str:
    """Return ``location`` with a relative path made absolute; URLs are returned as they are."""
    if urlsplit(location).scheme or PurePath(location).is_absolute():
        return location
    return str(Path(location).absolute())


async def _read_operator(
    uid: str,
    handles: OperatorStateHandles,
    storage: CheckpointStorage,
    codec: ValueCodec,
    max_parallelism: int,
) -> OperatorContents:
    # Incremental checkpoints are read whole: deltas applied, RocksDB files read back.
    decoder = partial(_decode, uid=uid, codec=codec)
    snapshots = [
        await read_whole(handle, storage, decoder, max_parallelism)
        for handle in handles.handles
        if handle is not None
    ]
    return _merged(uid, handles, snapshots)


def _decode(data: bytes, *, uid: str, codec: ValueCodec, location: str) -> OperatorSnapshot:
    if is_savepoint_state(data):
        return decode_savepoint_state(data, codec, location=location)
    if not codec.allow_pickle:
        raise SavepointFormatError(
            f"state file {location} of operator '{uid}' is pickled, as checkpoints are; it was "
            "not read, because unpickling runs code; pass allow_pickle=True (or "
            "--allow-pickle) only for checkpoints you trust"
        )
    return decode_snapshot(data, location=location)


def _merged(
    uid: str, handles: OperatorStateHandles, snapshots: list[OperatorSnapshot]
) -> OperatorContents:
    keyed = _merged_keyed(snapshots)
    return OperatorContents(
        uid=uid,
        parallelism=handles.parallelism,
        keyed=keyed,
        kinds={name: kind for s in snapshots for name, kind in s.kinds.items()},
        lists=_concatenated([s.lists for s in snapshots]),
        unions=_concatenated([s.unions for s in snapshots]),
        broadcast=_merged_tables([s.broadcast for s in snapshots]),
        key_count=len({key for table in keyed.values() for key in table}),
        size_bytes=handles.state_size,
    )


def _merged_keyed(snapshots: list[OperatorSnapshot]) -> dict[str, dict[Any, Any]]:
    return _merged_tables([states for s in snapshots for states in s.keyed.values()])


def _merged_tables(parts: list[dict[str, dict[Any, Any]]]) -> dict[str, dict[Any, Any]]:
    merged: dict[str, dict[Any, Any]] = {}
    for tables in parts:
        for name, table in tables.items():
            merged.setdefault(name, {}).update(table)
    return merged


def _concatenated(parts: list[dict[str, list[Any]]]) -> dict[str, list[Any]]:
    merged: dict[str, list[Any]] = {}
    for lists in parts:
        for name, values in lists.items():
            merged.setdefault(name, []).extend(values)
    return merged
