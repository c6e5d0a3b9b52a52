"""is_in_storage: which locations lie inside a checkpoint storage, and so may be unpickled."""

from __future__ import annotations

from pathlib import Path

import pytest

from lockgate.engine.checkpointing.storage import (
    FileSystemCheckpointStorage,
    MemoryCheckpointStorage,
    storage_for,
)
from lockgate.engine.restore.trust import is_in_storage


def test_a_file_under_the_storage_folder_is_in_it(tmp_path: Path) -> None:
    storage = FileSystemCheckpointStorage(tmp_path / "checkpoints")

    assert is_in_storage(storage, str(tmp_path / "checkpoints" / "job" / "chk-3" / "sums-0"))
    assert is_in_storage(storage, (tmp_path / "checkpoints" / "job" / "chk-3").as_uri())


@pytest.mark.parametrize(
    "location",
    ["{base}/../elsewhere/chk-3/sums-0", "{base}-and-more/chk-3/sums-0", "relative/sums-0"],
)
def test_a_file_outside_the_storage_folder_is_not_in_it(tmp_path: Path, location: str) -> None:
    base = tmp_path / "checkpoints"

    assert not is_in_storage(FileSystemCheckpointStorage(base), location.format(base=base))


def test_a_memory_storage_holds_no_file_on_disk(tmp_path: Path) -> None:
    assert not is_in_storage(MemoryCheckpointStorage(), str(tmp_path / "chk-3" / "sums-0"))


@pytest.mark.parametrize(
    ("location", "inside"),
    [
        ("s3://bucket/checkpoints/job/chk-3/sums-0", True),
        ("s3a://bucket/checkpoints/job/chk-3/sums-0", True),
        ("s3://bucket/checkpoints-old/job/chk-3/sums-0", False),
        ("s3://other/checkpoints/job/chk-3/sums-0", False),
        ("s3://bucket/checkpoints/../downloads/sums-0", False),
    ],
)
def test_an_s3_object_is_in_the_storage_under_its_bucket_and_prefix(
    location: str, inside: bool
) -> None:
    storage = storage_for("s3://bucket/checkpoints")

    assert is_in_storage(storage, location) is inside
