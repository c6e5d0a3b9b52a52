"""A run numbers its checkpoints past every id its storage holds, so "latest" is the newest.

A run restored from an older checkpoint goes on from there; the checkpoints of the run it
abandoned stay in storage with lower ids, so ``restore_from="latest"`` never returns to them.
"""

from __future__ import annotations

from pathlib import Path

from lockgate.engine import FileSystemCheckpointStorage
from tests.engine.jobs.generations import JOB, KEYS, Generations


async def test_latest_after_a_run_restored_from_an_older_checkpoint_is_that_runs_newest(
    tmp_path: Path,
) -> None:
    job = Generations((tmp_path / "checkpoints").as_uri())
    first_run, _ = await job.run(4)  # checkpoints 1..4, counts 1..4
    await job.run(1, restore_from=first_run[1])  # from checkpoint 2: counts 3..5

    _, committed = await job.run(1, restore_from="latest")

    # the newest checkpoint held count 5 and the offsets after it: only count 6 follows
    assert sorted(committed) == [(key, 6) for key in range(KEYS)]


async def test_a_restored_run_never_reuses_a_checkpoint_id_its_storage_holds(
    tmp_path: Path,
) -> None:
    job = Generations((tmp_path / "checkpoints").as_uri())
    first_run, _ = await job.run(4)

    restored_run, _ = await job.run(1, restore_from=first_run[1])

    assert Path(restored_run[0]).parent.name == "chk-5"
    ids = await FileSystemCheckpointStorage(tmp_path / "checkpoints").completed(JOB)
    assert ids == [1, 2, 3, 4, 5]
