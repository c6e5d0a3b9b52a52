"""What restore_from resolves to when there is nothing to restore: with if_missing="fail"
(the default) an error saying what to do, with "start" no restore at all."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from lockgate.engine import (
    CheckpointStorage,
    FileSystemCheckpointStorage,
    MemoryCheckpointStorage,
    RestoreError,
)
from lockgate.engine.errors import CheckpointNotFound
from lockgate.engine.restore.resolve import RestoreOptions, resolve_restore, restore_options

START = RestoreOptions(start_if_missing=True)


@pytest.fixture(params=["memory", "file"])
def empty(request: pytest.FixtureRequest, tmp_path: Path) -> CheckpointStorage:
    if request.param == "memory":
        return MemoryCheckpointStorage()
    return FileSystemCheckpointStorage(tmp_path / "checkpoints")


async def test_latest_on_an_empty_storage_starts_without_state_if_missing_is_start(
    empty: CheckpointStorage, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="lockgate")

    resolved = await resolve_restore(empty, "orders", "latest", START)

    assert resolved is None
    assert [record.job for record in caplog.records] == ["orders"]
    assert "job 'orders' starts without state (if_missing='start')" in caplog.text


async def test_latest_on_an_empty_storage_fails_by_default_saying_what_to_do(
    empty: CheckpointStorage,
) -> None:
    with pytest.raises(RestoreError) as refused:
        await resolve_restore(empty, "orders", "latest", RestoreOptions())

    assert str(refused.value) == (
        f"job 'orders' has no completed checkpoint in {empty!r}; start it without "
        "restore_from, pass if_missing='start' to start it fresh when there is none, or "
        "point the storage at its checkpoints"
    )


async def test_a_location_where_nothing_is_stored_starts_without_state_if_missing_is_start(
    tmp_path: Path,
) -> None:
    storage = FileSystemCheckpointStorage(tmp_path / "checkpoints")
    nowhere = str(tmp_path / "savepoints" / "savepoint-orders-1-gone")

    assert await resolve_restore(storage, "orders", nowhere, START) is None
    with pytest.raises(CheckpointNotFound):
        await resolve_restore(storage, "orders", nowhere, RestoreOptions())


@pytest.mark.parametrize("if_missing", ["fail", "start"])
def test_restore_options_take_if_missing_fail_or_start(if_missing: str) -> None:
    options = restore_options("no_claim", if_missing, allow_non_restored_state=False)

    assert options.start_if_missing is (if_missing == "start")


def test_another_if_missing_is_refused_naming_both_choices() -> None:
    with pytest.raises(ValueError, match=r"if_missing must be 'fail' .* or 'start'"):
        restore_options("no_claim", "skip", allow_non_restored_state=False)
