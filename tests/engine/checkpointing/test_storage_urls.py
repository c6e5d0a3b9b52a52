from pathlib import Path

import pytest

from lockgate.engine.checkpointing.storage import (
    FileSystemCheckpointStorage,
    MemoryCheckpointStorage,
    storage_for,
)


@pytest.mark.parametrize("url", [None, "memory://"])
def test_no_url_or_a_memory_url_gives_memory_storage(url: str | None) -> None:
    assert isinstance(storage_for(url), MemoryCheckpointStorage)


def test_a_file_url_gives_filesystem_storage_at_its_path(tmp_path: Path) -> None:
    storage = storage_for(f"file://{tmp_path}")
    assert isinstance(storage, FileSystemCheckpointStorage)
    assert storage.base_path == tmp_path


def test_an_absolute_path_gives_filesystem_storage(tmp_path: Path) -> None:
    storage = storage_for(str(tmp_path))
    assert isinstance(storage, FileSystemCheckpointStorage)
    assert storage.base_path == tmp_path


def test_a_file_url_with_escapes_is_unquoted() -> None:
    storage = storage_for("file:///tmp/my%20checkpoints")
    assert isinstance(storage, FileSystemCheckpointStorage)
    assert storage.base_path == Path("/tmp/my checkpoints")


def test_an_unknown_scheme_is_named() -> None:
    with pytest.raises(ValueError, match="unknown scheme 'gs'"):
        storage_for("gs://bucket/checkpoints")


def test_a_relative_path_is_refused() -> None:
    with pytest.raises(ValueError, match="relative path"):
        storage_for("checkpoints")


def test_a_file_url_with_a_host_is_refused() -> None:
    with pytest.raises(ValueError, match="three slashes"):
        storage_for("file://tmp/checkpoints")
