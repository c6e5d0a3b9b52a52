"""A restore decodes state files by their bytes and place: a forged checkpoint never unpickles."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import SavepointFormatError
from lockgate.engine.checkpointing.checksum import checksum_of
from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.snapshots import encode_snapshot
from lockgate.engine.savepoints.format import decode_savepoint_state
from lockgate.engine.savepoints.values import ValueCodec
from tests.engine.jobs.savepoints import Topic, exists
from tests.engine.savepoints.test_savepoints import Planted, counting_job, stopped_after_first


def disguise_as_checkpoint(savepoint: str, marker: Path) -> None:
    """Make the savepoint folder a checkpoint: ``is_savepoint: false``, its files pickled.

    One file carries a value whose unpickling leaves ``marker``; every checksum is
    recomputed, as anyone can.
    """
    folder = Path(savepoint)
    metadata = CheckpointMetadata.from_bytes((folder / "_metadata").read_bytes())
    operators = {
        uid: OperatorStateHandles(
            handles.parallelism,
            tuple(None if h is None else pickled(folder, h, marker) for h in handles.handles),
        )
        for uid, handles in metadata.operators.items()
    }
    forged = replace(metadata, operators=operators, is_savepoint=False)
    (folder / "_metadata").write_bytes(forged.to_bytes())


def pickled(folder: Path, handle: StateHandle, marker: Path) -> StateHandle:
    path = folder / handle.location
    codec = ValueCodec(CollectSink[Any]().state_types())  # the sink's transactions
    snapshot = decode_savepoint_state(path.read_bytes(), codec, location=str(path))
    if snapshot.keyed:
        snapshot.keyed[min(snapshot.keyed)]["reduced"][999] = Planted(marker)
    data = encode_snapshot(snapshot)
    path.write_bytes(data)
    return StateHandle(handle.location, len(data), checksum_of(data))


async def test_a_pickle_in_a_savepoint_folder_saying_it_is_a_checkpoint_never_runs(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(4), CollectSink[Any]()
    savepoint = await stopped_after_first(topic, sink, tmp_path / "savepoints")
    marker = tmp_path / "payload-ran"
    disguise_as_checkpoint(savepoint, marker)
    topic.close()

    with pytest.raises(SavepointFormatError, match=r"is pickled.*allow_pickle_in_savepoints"):
        await counting_job(topic, sink).execute("counts", restore_from=savepoint)

    assert not exists(marker)


async def test_the_same_pickle_runs_once_the_user_opts_in(tmp_path: Path) -> None:
    topic, sink = Topic(4), CollectSink[Any]()
    savepoint = await stopped_after_first(topic, sink, tmp_path / "savepoints")
    marker = tmp_path / "payload-ran"
    disguise_as_checkpoint(savepoint, marker)
    topic.close()
    trusting = counting_job(topic, sink)
    trusting.allow_pickle_in_savepoints()

    await trusting.execute("counts", restore_from=savepoint)

    assert exists(marker)  # the test above would have seen it, had the restore unpickled
