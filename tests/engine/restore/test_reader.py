"""read_snapshot: a savepoint (or, on request, a checkpoint) read as plain data without its job."""

from __future__ import annotations

from pathlib import Path

import pytest

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.snapshots import OperatorSnapshot, encode_snapshot
from lockgate.engine.checkpointing.storage import FileSystemCheckpointStorage
from lockgate.engine.errors import CheckpointNotFound, CorruptCheckpoint, SavepointFormatError
from lockgate.engine.io.sources import SourceSplit
from lockgate.engine.restore.reader import read_snapshot
from lockgate.engine.savepoints.format import encode_savepoint_state
from lockgate.engine.savepoints.values import TypeCodec, TypedValue, ValueCodec
from tests.engine.checkpointing.test_metadata import operators_as_a_list, rewrite_content
from tests.engine.savepoints.test_values import Point

JOB = "sums"
CHECKPOINT_ID = 7
MAX_PARALLELISM = 8
POINTS = ValueCodec([TypeCodec.for_dataclass(Point, "point")])

SUBTASKS: dict[str, list[OperatorSnapshot | None]] = {
    "numbers": [
        OperatorSnapshot("numbers", lists={"__splits__": [SourceSplit("0", 600)]}),
        OperatorSnapshot("numbers", lists={"__splits__": [SourceSplit("1", 601)]}),
    ],
    "sums": [
        OperatorSnapshot(
            "sums",
            keyed={0: {"total": {"a": 1}}, 3: {"total": {("b", 2): 2}, "last": {"a": "x"}}},
            kinds={"total": "reducing", "last": "value"},
        ),
        OperatorSnapshot("sums", keyed={5: {"total": {"c": 3}}}, kinds={"total": "reducing"}),
    ],
    "out": [None, None],
}


async def write_snapshot(
    folder: Path,
    subtasks: dict[str, list[OperatorSnapshot | None]] = SUBTASKS,
    *,
    savepoint: bool = True,
    codec: ValueCodec = POINTS,
) -> str:
    """Write a savepoint (or a pickled checkpoint) as the runtime does; return its location."""
    storage = FileSystemCheckpointStorage(folder)
    operators = {}
    for uid, snapshots in subtasks.items():
        handles: list[StateHandle | None] = []
        for index, snapshot in enumerate(snapshots):
            if snapshot is None:
                handles.append(None)
                continue
            data = (
                encode_savepoint_state(snapshot, codec) if savepoint else encode_snapshot(snapshot)
            )
            handles.append(await storage.write_state(JOB, CHECKPOINT_ID, f"{uid}-{index}", data))
        operators[uid] = OperatorStateHandles(len(handles), tuple(handles))
    metadata = CheckpointMetadata(
        JOB, CHECKPOINT_ID, 1.0, MAX_PARALLELISM, operators, is_savepoint=savepoint
    )
    return await storage.write_metadata(metadata)


async def test_a_savepoint_reads_back_with_its_metadata(tmp_path: Path) -> None:
    contents = await read_snapshot(await write_snapshot(tmp_path))

    assert (contents.job_name, contents.checkpoint_id) == (JOB, CHECKPOINT_ID)
    assert (contents.is_savepoint, contents.max_parallelism) == (True, MAX_PARALLELISM)
    assert sorted(contents.operators) == ["numbers", "out", "sums"]


async def test_keyed_state_is_merged_over_subtasks_and_key_groups(tmp_path: Path) -> None:
    sums = (await read_snapshot(await write_snapshot(tmp_path))).operators["sums"]

    assert sums.keyed == {"total": {"a": 1, ("b", 2): 2, "c": 3}, "last": {"a": "x"}}
    assert sums.kinds == {"total": "reducing", "last": "value"}
    assert (sums.parallelism, sums.key_count) == (2, 3)


async def test_list_state_is_concatenated_in_subtask_order(tmp_path: Path) -> None:
    numbers = (await read_snapshot(await write_snapshot(tmp_path))).operators["numbers"]

    assert numbers.lists == {"__splits__": [SourceSplit("0", 600), SourceSplit("1", 601)]}


async def test_union_and_broadcast_state_are_read(tmp_path: Path) -> None:
    subtasks: dict[str, list[OperatorSnapshot | None]] = {
        "rules": [
            OperatorSnapshot("rules", unions={"u": [1]}, broadcast={"b": {"k": 1}}),
            OperatorSnapshot("rules", unions={"u": [2]}, broadcast={"b": {"k": 1}}),
        ]
    }

    rules = (await read_snapshot(await write_snapshot(tmp_path, subtasks))).operators["rules"]

    assert (rules.unions, rules.broadcast) == ({"u": [1, 2]}, {"b": {"k": 1}})


async def test_an_operator_without_state_reads_as_empty(tmp_path: Path) -> None:
    out = (await read_snapshot(await write_snapshot(tmp_path))).operators["out"]

    assert (out.parallelism, out.keyed, out.lists, out.size_bytes) == (2, {}, {}, 0)


async def test_size_counts_the_bytes_of_every_state_file(tmp_path: Path) -> None:
    location = await write_snapshot(tmp_path)

    sums = (await read_snapshot(location)).operators["sums"]

    files = [encode_savepoint_state(s, POINTS) for s in SUBTASKS["sums"] if s is not None]
    assert sums.size_bytes == sum(len(data) for data in files) > 0


@pytest.mark.parametrize("form", ["folder", "file URL", "relative"])
async def test_the_folder_a_file_url_and_a_relative_path_name_the_same_savepoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    folder = Path(await write_snapshot(tmp_path)).parent
    monkeypatch.chdir(tmp_path)
    location = {
        "folder": str(folder),
        "file URL": folder.as_uri(),
        "relative": str(folder.relative_to(tmp_path)),
    }[form]

    contents = await read_snapshot(location)

    assert contents.operators["sums"].key_count == 3


async def test_values_of_types_not_given_read_as_typed_values(tmp_path: Path) -> None:
    subtasks: dict[str, list[OperatorSnapshot | None]] = {
        "p": [OperatorSnapshot("p", keyed={0: {"v": {"a": Point(1, (2,))}}})]
    }
    location = await write_snapshot(tmp_path, subtasks)

    contents = await read_snapshot(location)

    assert contents.operators["p"].keyed == {"v": {"a": TypedValue("point", {"x": 1, "y": (2,)})}}


async def test_values_of_types_given_read_as_their_classes(tmp_path: Path) -> None:
    subtasks: dict[str, list[OperatorSnapshot | None]] = {
        "p": [OperatorSnapshot("p", keyed={0: {"v": {"a": Point(1, (2,))}}})]
    }
    location = await write_snapshot(tmp_path, subtasks)

    contents = await read_snapshot(location, types=POINTS.types)

    assert contents.operators["p"].keyed == {"v": {"a": Point(1, (2,))}}


async def test_a_pickled_checkpoint_is_refused_without_allow_pickle(tmp_path: Path) -> None:
    location = await write_snapshot(tmp_path, savepoint=False)

    expected = r"operator '(numbers|sums)' is pickled.*unpickling runs code.*allow_pickle=True"
    with pytest.raises(SavepointFormatError, match=expected):
        await read_snapshot(location)


async def test_a_pickled_checkpoint_is_read_with_allow_pickle(tmp_path: Path) -> None:
    location = await write_snapshot(tmp_path, savepoint=False)

    contents = await read_snapshot(location, allow_pickle=True)

    assert not contents.is_savepoint
    assert contents.operators["sums"].keyed["total"] == {"a": 1, ("b", 2): 2, "c": 3}


async def test_a_location_with_nothing_there_raises_checkpoint_not_found(tmp_path: Path) -> None:
    with pytest.raises(CheckpointNotFound, match=str(tmp_path)):
        await read_snapshot(str(tmp_path / "nothing"))


async def test_metadata_of_the_wrong_shape_is_corrupt_naming_its_file(tmp_path: Path) -> None:
    metadata = Path(await write_snapshot(tmp_path))
    rewrite_content(metadata, operators_as_a_list)

    with pytest.raises(CorruptCheckpoint, match=rf"{metadata} is corrupt: .*operators must be"):
        await read_snapshot(str(metadata))
