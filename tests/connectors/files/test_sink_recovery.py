"""A restored FileSink commits the pending files its checkpoint holds, whichever subtask gets
them, refuses to lose a part whose files are gone, and removes only the files of writers that
have ended: never those of a writer still running, in this job or another."""

from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import FileSink
from lockgate.connectors.errors import ConnectorError
from lockgate.engine import SinkContext, SinkWriter, SystemClock

DEAD_FENCE = "0123456789ab"


def context(
    subtask_index: int = 0, parallelism: int = 1, restored: tuple[Any, ...] = ()
) -> SinkContext:
    return SinkContext("out", subtask_index, parallelism, SystemClock(), restored_state=restored)


async def opened(sink: FileSink, where: SinkContext) -> SinkWriter[Any]:
    writer = sink.create_writer(where)
    await writer.open()
    return writer


async def pre_committed(sink: FileSink, lines: list[str], where: SinkContext) -> list[Any]:
    """Write ``lines``, snapshot checkpoint 1, and close before it completes; return the state."""
    writer = await opened(sink, where)
    await writer.write(lines)
    state = await writer.snapshot_state(1)
    await writer.close()
    return state


def leftover(directory: Path, state: str, *, subtask: int = 0, uid: str = "out") -> Path:
    """A hidden part file as a killed writer of subtask ``subtask`` leaves it."""
    path = directory / f".part-{uid}-{subtask}-{DEAD_FENCE}-0.txt.{state}"
    path.write_text("never committed\n")
    return path


def remove_all(directory: Path) -> None:
    for path in directory.iterdir():
        path.unlink()


def hidden_names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir() if path.name.startswith("."))


def pending_files(directory: Path) -> list[Path]:
    return sorted(directory.glob(".*.pending"))


def move_away_committed(sink: FileSink) -> None:
    """What a reader of the directory may do: take the committed part files elsewhere."""
    for path in sink.part_files():
        path.unlink()


async def test_a_pre_committed_transaction_is_committed_when_its_writer_is_restored(
    tmp_path: Path,
) -> None:
    sink = FileSink(tmp_path)
    state = await pre_committed(sink, ["a", "b"], context())

    writer = await opened(sink, context(restored=tuple(state)))

    assert sink.read_lines() == ["a", "b"]
    await writer.close()


async def test_a_restored_transaction_committed_before_is_not_committed_twice(
    tmp_path: Path,
) -> None:
    sink = FileSink(tmp_path)
    writer = await opened(sink, context())
    await writer.write(["once"])
    state = await writer.snapshot_state(1)
    await writer.notify_checkpoint_complete(1)
    await writer.close()

    restored = await opened(sink, context(restored=tuple(state)))

    assert sink.read_lines() == ["once"]
    await restored.close()


async def test_after_a_rescale_a_new_subtask_commits_another_old_subtasks_files(
    tmp_path: Path,
) -> None:
    sink = FileSink(tmp_path)
    state = await pre_committed(sink, ["from subtask 2"], context(2, parallelism=3))

    writer = await opened(sink, context(0, parallelism=1, restored=tuple(state)))

    assert sink.read_lines() == ["from subtask 2"]
    await writer.close()


async def test_committing_a_transaction_whose_pending_files_are_gone_raises(
    tmp_path: Path,
) -> None:
    sink = FileSink(tmp_path)
    state = await pre_committed(sink, ["a"], context())
    remove_all(tmp_path)

    with pytest.raises(ConnectorError, match=r"neither it nor its pending file exists.*lost"):
        await sink.commit(state[0]["transaction"])


async def test_opening_removes_in_progress_files_of_its_subtask_left_by_a_killed_writer(
    tmp_path: Path,
) -> None:
    orphan = leftover(tmp_path, "inprogress")

    writer = await opened(FileSink(tmp_path), context())

    assert not orphan.exists()
    await writer.close()


async def test_opening_leaves_the_files_of_other_subtasks_and_other_sinks_alone(
    tmp_path: Path,
) -> None:
    others = [
        leftover(tmp_path, "inprogress", subtask=1),
        leftover(tmp_path, "inprogress", uid="x"),
    ]

    writer = await opened(FileSink(tmp_path), context(0, parallelism=2))

    assert all(path.exists() for path in others)
    await writer.close()


async def test_the_last_subtask_removes_orphans_of_indices_beyond_the_parallelism(
    tmp_path: Path,
) -> None:
    orphan = leftover(tmp_path, "inprogress", subtask=3)

    writer = await opened(FileSink(tmp_path), context(1, parallelism=2))

    assert not orphan.exists()
    await writer.close()


async def test_a_restored_writers_later_pending_files_are_removed_after_the_first_checkpoint(
    tmp_path: Path,
) -> None:
    sink = FileSink(tmp_path)
    writer = await opened(sink, context())
    await writer.write(["restored"])
    state = await writer.snapshot_state(1)
    await writer.write(["pre-committed after the restored checkpoint"])
    await writer.snapshot_state(2)
    await writer.close()  # failed before checkpoint 2 completed
    restored = await opened(sink, context(restored=tuple(state)))
    later = pending_files(tmp_path)

    await restored.snapshot_state(3)
    await restored.notify_checkpoint_complete(3)

    assert len(later) == 1, "another subtask may still commit it on open"
    assert (pending_files(tmp_path), sink.read_lines()) == ([], ["restored"])
    await restored.close()


async def test_a_pending_file_of_a_writer_no_restored_state_names_is_left_alone(
    tmp_path: Path,
) -> None:
    other_jobs = leftover(tmp_path, "pending")  # its own job's restore may still commit it
    writer = await opened(FileSink(tmp_path), context())

    await writer.snapshot_state(1)
    await writer.notify_checkpoint_complete(1)

    assert other_jobs.exists()
    await writer.close()


async def test_opening_leaves_the_in_progress_files_of_a_running_writer_alone(
    tmp_path: Path,
) -> None:
    sink = FileSink(tmp_path)
    running = await opened(sink, context())
    await running.write(["still being written"])

    second = await opened(FileSink(tmp_path), context())
    await running.snapshot_state(1)
    await running.notify_checkpoint_complete(1)

    assert sink.read_lines() == ["still being written"]
    await second.close()
    await running.close()


async def test_a_writer_restored_from_a_running_one_leaves_its_pending_files_alone(
    tmp_path: Path,
) -> None:
    sink = FileSink(tmp_path)
    running = await opened(sink, context())
    savepoint = await running.snapshot_state(1)
    restored = await opened(FileSink(tmp_path), context(restored=tuple(savepoint)))
    await running.write(["pending in the running writer"])
    await running.snapshot_state(2)

    await restored.snapshot_state(1)
    await restored.notify_checkpoint_complete(1)
    await running.notify_checkpoint_complete(2)

    assert sink.read_lines() == ["pending in the running writer"]
    await restored.close()
    await running.close()


async def test_a_killed_writers_lock_file_and_in_progress_files_are_removed_on_open(
    tmp_path: Path,
) -> None:
    orphan = leftover(tmp_path, "inprogress")
    lock = tmp_path / f".part-out-0-{DEAD_FENCE}.lock"
    lock.touch()  # a killed process leaves it, and the lock on it dies with the process

    writer = await opened(FileSink(tmp_path), context())

    assert (orphan.exists(), lock.exists()) == (False, False)
    await writer.close()


async def test_recovering_a_transaction_whose_pending_files_were_removed_raises(
    tmp_path: Path,
) -> None:
    sink = FileSink(tmp_path)
    state = await pre_committed(sink, ["lost"], context())
    for path in pending_files(tmp_path):
        path.unlink()

    writer = sink.create_writer(context(restored=tuple(state)))
    with pytest.raises(ConnectorError, match=r"'out'.*neither it nor its pending.*lost"):
        await writer.open()
    await writer.close()


async def test_recovering_a_transaction_whose_files_were_moved_away_does_nothing(
    tmp_path: Path,
) -> None:
    sink = FileSink(tmp_path)
    writer = await opened(sink, context())
    await writer.write(["consumed"])
    state = await writer.snapshot_state(1)
    await writer.notify_checkpoint_complete(1)
    await writer.close()
    move_away_committed(sink)

    restored = await opened(sink, context(restored=tuple(state)))

    assert sink.read_lines() == []
    await restored.close()


async def test_a_transaction_committed_in_recovery_and_moved_away_is_recovered_again(
    tmp_path: Path,
) -> None:
    sink = FileSink(tmp_path)
    state = await pre_committed(sink, ["committed by the first restore"], context())
    first = await opened(sink, context(restored=tuple(state)))
    await first.close()  # failed before a checkpoint of its own completed
    move_away_committed(sink)

    second = await opened(sink, context(restored=tuple(state)))

    assert sink.read_lines() == []
    await second.close()


async def test_a_writer_that_committed_everything_leaves_no_hidden_file(tmp_path: Path) -> None:
    writer = await opened(FileSink(tmp_path), context())
    await writer.write(["a"])
    await writer.finish()
    await writer.snapshot_state(1)
    await writer.notify_checkpoint_complete(1)

    await writer.close()

    assert hidden_names(tmp_path) == []


async def test_leftovers_a_writer_died_before_removing_are_removed_by_the_one_restoring_it(
    tmp_path: Path,
) -> None:
    # First writer: checkpoint 1 completes in the checkpoint, not in the sink (killed).
    sink = FileSink(tmp_path)
    first = await pre_committed(sink, ["a"], context())
    # Second writer: commits the first's transaction (so the first's record exists), then its
    # own checkpoint 2 completes, and it is killed before its notification removed the
    # first's leftovers.
    second = await opened(sink, context(restored=tuple(first)))
    await second.write(["b"])
    state = await second.snapshot_state(2)
    await second.close()
    assert len(hidden_names(tmp_path)) == 2, "the first's record, the second's pending file"

    third = await opened(sink, context(restored=tuple(state)))
    await third.finish()
    await third.snapshot_state(3)
    await third.notify_checkpoint_complete(3)
    await third.close()

    assert (hidden_names(tmp_path), sorted(sink.read_lines())) == ([], ["a", "b"])
