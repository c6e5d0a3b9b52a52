"""A run restored from "latest" takes over the job's checkpoints in its storage: retention
keeps ``max_retained`` of them across restarts, and deletes the rest as a newer one completes."""

from __future__ import annotations

from pathlib import Path

import pytest

from lockgate.engine import FileSystemCheckpointStorage
from lockgate.engine.checkpointing.shared_registry import shared_files
from tests.engine.jobs.generations import JOB, KEYS, Generations

RESTARTS = 5
BACKENDS = ["memory", "memory-incremental", "rocksdb-incremental"]


async def restarted(job: Generations, restarts: int) -> None:
    await job.run(1)
    for _ in range(restarts):
        await job.run(1, restore_from="latest")


@pytest.mark.parametrize("max_retained", [1, 2])
@pytest.mark.parametrize("backend", BACKENDS)
async def test_restarts_from_latest_leave_only_the_retained_checkpoints(
    backend: str, max_retained: int, tmp_path: Path
) -> None:
    job = Generations(
        (tmp_path / "checkpoints").as_uri(), max_retained=max_retained, backend=backend
    )

    await restarted(job, RESTARTS)  # one checkpoint per run: ids 1 to 6

    ids = await FileSystemCheckpointStorage(tmp_path / "checkpoints").completed(JOB)
    assert ids == list(range(RESTARTS + 2 - max_retained, RESTARTS + 2))


@pytest.mark.parametrize("backend", ["memory-incremental", "rocksdb-incremental"])
async def test_restarts_from_latest_keep_exactly_the_shared_files_retained_checkpoints_use(
    backend: str, tmp_path: Path
) -> None:
    storage = FileSystemCheckpointStorage(tmp_path / "checkpoints")
    job = Generations(storage.base_path.as_uri(), max_retained=2, backend=backend)
    await restarted(job, RESTARTS)

    retained = [await storage.latest(JOB)]
    assert retained[0] is not None
    previous = retained[0].checkpoint_id - 1
    retained.append(await storage.read_metadata(str(storage.base_path / JOB / f"chk-{previous}")))
    used = {Path(h.location).name for m in retained if m is not None for h in shared_files(m)}
    assert {path.name for path in (storage.base_path / JOB / "shared").iterdir()} == used
    _, committed = await job.run(1, restore_from="latest")  # and the newest still restores
    assert sorted(committed) == [(key, RESTARTS + 2) for key in range(KEYS)]


async def test_a_restart_retains_no_more_than_its_max_retained_of_what_an_earlier_run_kept(
    tmp_path: Path,
) -> None:
    job = Generations((tmp_path / "checkpoints").as_uri(), max_retained=3)
    await job.run(3)  # checkpoints 1, 2 and 3 retained

    job.max_retained = 1
    await job.run(1, restore_from="latest")

    assert await FileSystemCheckpointStorage(tmp_path / "checkpoints").completed(JOB) == [4]
