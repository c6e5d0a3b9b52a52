"""The filesystem storage: its layout, atomic metadata, and locations another process can use."""

import os
from pathlib import Path

import pytest

from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.storage import FileSystemCheckpointStorage
from tests.engine.checkpointing.test_metadata import operators_as_a_list, rewrite_content

JOB = "orders"


async def checkpoint(storage: FileSystemCheckpointStorage, checkpoint_id: int) -> str:
    handle = await storage.write_state(JOB, checkpoint_id, "sums-0", b"state")
    operators = {"sums": OperatorStateHandles(1, (handle,))}
    return await storage.write_metadata(CheckpointMetadata(JOB, checkpoint_id, 1.0, 128, operators))


async def test_files_follow_the_job_and_checkpoint_layout(tmp_path: Path) -> None:
    storage = FileSystemCheckpointStorage(tmp_path)
    location = await checkpoint(storage, 4)
    assert location == str(tmp_path / JOB / "chk-4" / "_metadata")
    assert sorted(p.name for p in (tmp_path / JOB / "chk-4").iterdir()) == ["_metadata", "sums-0"]


async def test_write_metadata_leaves_no_temporary_file(tmp_path: Path) -> None:
    storage = FileSystemCheckpointStorage(tmp_path)
    await checkpoint(storage, 1)
    assert not [p for p in (tmp_path / JOB / "chk-1").iterdir() if p.name.startswith(".")]


async def test_a_half_written_temporary_metadata_is_never_taken_for_metadata(
    tmp_path: Path,
) -> None:
    storage = FileSystemCheckpointStorage(tmp_path)
    await checkpoint(storage, 1)
    await storage.write_state(JOB, 2, "sums-0", b"state")
    (tmp_path / JOB / "chk-2" / "._metadata.crashed.tmp").write_bytes(b'{"format": "lockg')
    latest = await storage.latest(JOB)
    assert (await storage.completed(JOB), latest and latest.checkpoint_id) == ([1], 1)


async def test_a_failed_rename_leaves_neither_metadata_nor_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(source: object, target: object) -> None:
        raise OSError("disk unplugged")

    storage = FileSystemCheckpointStorage(tmp_path)
    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk unplugged"):
        await checkpoint(storage, 1)
    assert [p.name for p in (tmp_path / JOB / "chk-1").iterdir()] == ["sums-0"]


async def test_discard_removes_the_checkpoint_folder(tmp_path: Path) -> None:
    storage = FileSystemCheckpointStorage(tmp_path)
    await checkpoint(storage, 1)
    await storage.discard(JOB, 1)
    assert not (tmp_path / JOB / "chk-1").exists()


async def test_folders_that_are_not_checkpoints_are_ignored(tmp_path: Path) -> None:
    storage = FileSystemCheckpointStorage(tmp_path)
    await checkpoint(storage, 1)
    (tmp_path / JOB / "chk-x").mkdir()
    (tmp_path / JOB / "savepoints").mkdir()
    assert await storage.completed(JOB) == [1]


async def test_another_storage_restores_from_the_location_alone(tmp_path: Path) -> None:
    location = await checkpoint(FileSystemCheckpointStorage(tmp_path / "a"), 1)
    elsewhere = FileSystemCheckpointStorage(tmp_path / "b")
    metadata = await elsewhere.read_metadata(location)
    handle = metadata.operators["sums"].handles[0]
    assert handle is not None and await elsewhere.read_state(handle) == b"state"


async def test_read_metadata_accepts_a_file_url(tmp_path: Path) -> None:
    storage = FileSystemCheckpointStorage(tmp_path)
    location = await checkpoint(storage, 1)
    metadata = await storage.read_metadata(f"file://{tmp_path / JOB / 'chk-1'}")
    assert metadata == await storage.read_metadata(location)


def test_a_relative_base_path_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert FileSystemCheckpointStorage("checkpoints").base_path == tmp_path / "checkpoints"


async def test_latest_skips_checksum_valid_metadata_of_the_wrong_shape(tmp_path: Path) -> None:
    storage = FileSystemCheckpointStorage(tmp_path)
    await checkpoint(storage, 1)
    newest = Path(await checkpoint(storage, 2))
    rewrite_content(newest, operators_as_a_list)

    latest = await storage.latest(JOB)

    assert latest is not None and latest.checkpoint_id == 1
