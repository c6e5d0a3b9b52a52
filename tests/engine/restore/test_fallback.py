"""restore_from="latest" takes the newest checkpoint it can read: damaged state files skip one."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import RestartStrategy, StreamEnvironment
from lockgate.engine.errors import CheckpointNotFound, CorruptCheckpoint
from lockgate.engine.testing import FailOnce
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.savepoints import Topic, TopicSource
from tests.engine.restore.test_retained_checkpoint_chain import counts_job

KEYS, FIRST, MORE = 6, 20, 10
JOB = "counts"


def events(per_key: int) -> list[tuple[int, int]]:
    return [(key, 1) for _ in range(per_key) for key in range(KEYS)]


def counts(start: int, end: int) -> list[tuple[int, int]]:
    """The running counts a job emits per key for its records start..end (1-based)."""
    return sorted((key, count) for key in range(KEYS) for count in range(start, end + 1))


async def two_checkpoints(topic: Topic, storage: str) -> None:
    """Checkpoint 1 after FIRST records per key, checkpoint 2 after MORE more; then cancel."""
    async with counts_job(topic, CollectSink[Any](), storage, "memory").start(JOB) as job:
        for per_key in (FIRST, MORE):
            topic.append(events(per_key), partition_of=lambda event: event[0])
            await topic.all_read.wait()
            await job.trigger_checkpoint()
        await cancel_and_wait(job)


def flip_a_byte(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))


def damage_counts_state(
    checkpoints: Path, checkpoint_id: int, damage: Callable[[Path], Any]
) -> Path:
    """Damage one state file of the 'counts' operator in the checkpoint; return its path."""
    folder = checkpoints / JOB / f"chk-{checkpoint_id}"
    state_file = min(path for path in folder.iterdir() if path.name.startswith("counts"))
    damage(state_file)
    return state_file


@pytest.mark.parametrize("damage", [flip_a_byte, Path.unlink], ids=["corrupt", "missing"])
async def test_a_damaged_state_file_of_the_latest_checkpoint_restores_the_one_before(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: Callable[[Path], Any]
) -> None:
    topic, checkpoints = Topic(2), tmp_path / "checkpoints"
    await two_checkpoints(topic, checkpoints.as_uri())
    damaged = damage_counts_state(checkpoints, 2, damage)
    topic.close()
    sink, read_before = CollectSink[Any](), topic.consumed
    caplog.set_level(logging.WARNING, logger="lockgate.engine.restore")

    await counts_job(topic, sink, checkpoints.as_uri(), "memory").execute(
        JOB, restore_from="latest"
    )

    # Checkpoint 1's positions and counts: the MORE records after it are read again and
    # counted on from FIRST; its pending transaction (the FIRST counts) is committed again.
    assert topic.consumed - read_before == KEYS * MORE
    assert sorted(sink.results) == counts(1, FIRST + MORE)
    [fallback] = [r for r in caplog.records if r.name == "lockgate.engine.restore.fallback"]
    assert fallback.levelno == logging.WARNING
    assert (fallback.checkpoint_id, fallback.restored_checkpoint_id) == (2, 1)  # type: ignore[attr-defined]
    assert str(damaged) in fallback.getMessage()


async def test_with_no_older_checkpoint_the_damage_is_raised(tmp_path: Path) -> None:
    topic, checkpoints = Topic(2), tmp_path / "checkpoints"
    await two_checkpoints(topic, checkpoints.as_uri())
    damage_counts_state(checkpoints, 2, flip_a_byte)
    damage_counts_state(checkpoints, 1, flip_a_byte)
    topic.close()

    with pytest.raises(CorruptCheckpoint, match=r"chk-1/counts"):
        await counts_job(topic, CollectSink[Any](), checkpoints.as_uri(), "memory").execute(
            JOB, restore_from="latest"
        )


async def test_a_checkpoint_restored_by_its_location_never_falls_back(tmp_path: Path) -> None:
    topic, checkpoints = Topic(2), tmp_path / "checkpoints"
    await two_checkpoints(topic, checkpoints.as_uri())
    missing = damage_counts_state(checkpoints, 2, Path.unlink)
    topic.close()
    expected = (
        rf"checkpoint 2 of job '{JOB}' is incomplete: no state file at {missing} \(state of "
        r"operator subtask 'counts' \d/2\); it cannot be restored: restore an older checkpoint "
        r"or a savepoint instead"
    )

    with pytest.raises(CheckpointNotFound, match=expected) as refused:
        await counts_job(topic, CollectSink[Any](), checkpoints.as_uri(), "memory").execute(
            JOB, restore_from=str(checkpoints / JOB / "chk-2")
        )
    assert "write_metadata" not in str(refused.value)


def failing_counts_job(topic: Topic, storage: str, fail: FailOnce) -> StreamEnvironment:
    """Running counts per key; the record ("fail", 0) fails the job once, then is dropped."""

    def fail_on(event: tuple[Any, int]) -> tuple[Any, int]:
        if event[0] == "fail":
            fail.maybe_fire()
        return event

    env = StreamEnvironment(parallelism=2, max_parallelism=32)
    env.enable_checkpointing(max_retained=2)
    env.set_checkpoint_storage(storage)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed)
        .map(fail_on)
        .filter(lambda event: event[0] != "fail")
        .key_by(lambda event: event[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(CollectSink[Any](), uid="out")
    )
    return env


async def test_a_restart_whose_latest_checkpoint_is_damaged_restores_the_one_before(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    topic, fail, checkpoints = Topic(2), FailOnce(), tmp_path / "checkpoints"
    caplog.set_level(logging.WARNING, logger="lockgate.engine.restore")
    async with failing_counts_job(topic, checkpoints.as_uri(), fail).start(JOB) as job:
        for per_key in (FIRST, MORE):
            topic.append(events(per_key), partition_of=lambda event: event[0])
            await topic.all_read.wait()
            await job.trigger_checkpoint()
        damage_counts_state(checkpoints, 2, flip_a_byte)
        read_before = topic.consumed
        topic.append([("fail", 0)], partition_of=lambda event: 0)
        topic.close()
        await job.wait()

    assert fail.fired
    # The failing record, then, from checkpoint 1's positions, the MORE after it and it again.
    assert topic.consumed - read_before == 1 + KEYS * MORE + 1
    [fallback] = [r for r in caplog.records if r.name == "lockgate.engine.restore.fallback"]
    assert (fallback.checkpoint_id, fallback.restored_checkpoint_id) == (2, 1)  # type: ignore[attr-defined]
