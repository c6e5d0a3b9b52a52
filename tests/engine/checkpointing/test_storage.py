"""Behaviour every CheckpointStorage shares, run against memory and the filesystem."""

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from lockgate.engine.checkpointing.metadata import CheckpointMetadata, OperatorStateHandles
from lockgate.engine.checkpointing.storage import (
    CheckpointStorage,
    FileSystemCheckpointStorage,
    MemoryCheckpointStorage,
)
from lockgate.engine.errors import CheckpointNotFound, CorruptCheckpoint

JOB = "orders"


@dataclass
class Backend:
    storage: CheckpointStorage
    corrupt: Callable[[str], None]


def flip_last_byte(location: str) -> None:
    path = Path(location)
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))


@pytest.fixture(params=["memory", "filesystem"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "memory":
        memory = MemoryCheckpointStorage()
        return Backend(memory, memory.corrupt)
    return Backend(FileSystemCheckpointStorage(tmp_path / "checkpoints"), flip_last_byte)


@pytest.fixture
def storage(backend: Backend) -> CheckpointStorage:
    return backend.storage


async def checkpoint(storage: CheckpointStorage, checkpoint_id: int, job: str = JOB) -> str:
    handle = await storage.write_state(job, checkpoint_id, "sums-0", b"state %d" % checkpoint_id)
    operators = {"sums": OperatorStateHandles(1, (handle,))}
    metadata = CheckpointMetadata(job, checkpoint_id, 1.0, 128, operators)
    return await storage.write_metadata(metadata)


def test_each_storage_is_a_checkpoint_storage(storage: CheckpointStorage) -> None:
    assert isinstance(storage, CheckpointStorage)


async def test_state_round_trips(storage: CheckpointStorage) -> None:
    handle = await storage.write_state(JOB, 1, "sums-0", b"\x00state\xff")
    assert await storage.read_state(handle) == b"\x00state\xff"


async def test_a_handle_records_size_and_checksum(storage: CheckpointStorage) -> None:
    handle = await storage.write_state(JOB, 1, "sums-0", b"abc")
    assert (handle.size, handle.checksum[:7]) == (3, "sha256:")


async def test_read_state_detects_a_flipped_byte(backend: Backend) -> None:
    handle = await backend.storage.write_state(JOB, 1, "sums-0", b"state")
    backend.corrupt(handle.location)
    with pytest.raises(CorruptCheckpoint, match="checksum") as raised:
        await backend.storage.read_state(handle)
    assert raised.value.location == handle.location


async def test_read_state_detects_a_wrong_size(storage: CheckpointStorage) -> None:
    handle = await storage.write_state(JOB, 1, "sums-0", b"state")
    with pytest.raises(CorruptCheckpoint, match="5 bytes, 6 were written"):
        await storage.read_state(replace(handle, size=6))


async def test_reading_a_missing_state_file_says_nothing_is_there(
    storage: CheckpointStorage,
) -> None:
    handle = await storage.write_state(JOB, 1, "sums-0", b"state")
    await storage.discard(JOB, 1)
    with pytest.raises(CheckpointNotFound):
        await storage.read_state(handle)


async def test_metadata_round_trips_through_its_location(storage: CheckpointStorage) -> None:
    location = await checkpoint(storage, 1)
    metadata = await storage.read_metadata(location)
    assert await storage.read_state(metadata.operators["sums"].handles[0]) == b"state 1"


async def test_read_metadata_accepts_the_checkpoint_folder(storage: CheckpointStorage) -> None:
    location = await checkpoint(storage, 1)
    folder = location.removesuffix("/_metadata")
    assert await storage.read_metadata(folder) == await storage.read_metadata(location)


async def test_reading_missing_metadata_says_nothing_is_there(storage: CheckpointStorage) -> None:
    location = await checkpoint(storage, 1)
    await storage.discard(JOB, 1)
    with pytest.raises(CheckpointNotFound):
        await storage.read_metadata(location)


async def test_read_checkpoint_finds_a_checkpoint_by_job_and_id(storage: CheckpointStorage) -> None:
    location = await checkpoint(storage, 2)
    assert await storage.read_checkpoint(JOB, 2) == await storage.read_metadata(location)


async def test_reading_a_checkpoint_that_is_not_there_says_so(storage: CheckpointStorage) -> None:
    await checkpoint(storage, 1)
    with pytest.raises(CheckpointNotFound):
        await storage.read_checkpoint(JOB, 2)


async def test_a_job_without_checkpoints_has_no_latest(storage: CheckpointStorage) -> None:
    assert await storage.latest(JOB) is None


async def test_latest_is_the_newest_checkpoint(storage: CheckpointStorage) -> None:
    for checkpoint_id in (1, 3, 2):
        await checkpoint(storage, checkpoint_id)
    latest = await storage.latest(JOB)
    assert latest is not None and latest.checkpoint_id == 3


async def test_latest_ignores_a_checkpoint_without_metadata(storage: CheckpointStorage) -> None:
    await checkpoint(storage, 1)
    await storage.write_state(JOB, 2, "sums-0", b"unfinished")
    latest = await storage.latest(JOB)
    assert latest is not None and latest.checkpoint_id == 1


async def test_latest_skips_corrupt_metadata_for_an_older_checkpoint(backend: Backend) -> None:
    await checkpoint(backend.storage, 1)
    backend.corrupt(await checkpoint(backend.storage, 2))
    latest = await backend.storage.latest(JOB)
    assert latest is not None and latest.checkpoint_id == 1


async def test_completed_lists_only_checkpoints_with_metadata(storage: CheckpointStorage) -> None:
    await checkpoint(storage, 2)
    await checkpoint(storage, 1)
    await storage.write_state(JOB, 3, "sums-0", b"unfinished")
    assert await storage.completed(JOB) == [1, 2]


async def test_discard_removes_a_completed_checkpoint(storage: CheckpointStorage) -> None:
    await checkpoint(storage, 1)
    await checkpoint(storage, 2)
    await storage.discard(JOB, 2)
    assert await storage.completed(JOB) == [1]


async def test_discard_removes_an_aborted_checkpoint_without_metadata(
    storage: CheckpointStorage,
) -> None:
    handle = await storage.write_state(JOB, 1, "sums-0", b"aborted")
    await storage.discard(JOB, 1)
    with pytest.raises(CheckpointNotFound):
        await storage.read_state(handle)


async def test_discarding_a_missing_checkpoint_does_nothing(storage: CheckpointStorage) -> None:
    await storage.discard(JOB, 9)
    assert await storage.completed(JOB) == []


async def test_jobs_keep_their_checkpoints_apart(storage: CheckpointStorage) -> None:
    await checkpoint(storage, 1, job="orders")
    await checkpoint(storage, 5, job="orders-eu")
    assert (await storage.completed("orders"), await storage.completed("orders-eu")) == ([1], [5])


@pytest.mark.parametrize("name", ["a/b", "..", "", "_metadata", "._metadata.x.tmp"])
async def test_a_state_name_that_is_not_a_plain_file_name_is_rejected(
    storage: CheckpointStorage, name: str
) -> None:
    with pytest.raises(ValueError, match="state file name"):
        await storage.write_state(JOB, 1, name, b"x")


@pytest.mark.parametrize("job", ["a/b", ".", ""])
async def test_a_job_name_that_cannot_name_a_folder_is_rejected(
    storage: CheckpointStorage, job: str
) -> None:
    with pytest.raises(ValueError, match="job name"):
        await storage.completed(job)


async def test_latest_before_an_id_is_the_newest_older_checkpoint(backend: Backend) -> None:
    for checkpoint_id in (1, 2, 4):
        await checkpoint(backend.storage, checkpoint_id)
    backend.corrupt(await checkpoint(backend.storage, 3))

    older = await backend.storage.latest(JOB, before=4)

    assert older is not None and older.checkpoint_id == 2  # 3's metadata is skipped
    assert await backend.storage.latest(JOB, before=1) is None
