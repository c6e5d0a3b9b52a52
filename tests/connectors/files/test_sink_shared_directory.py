"""Two jobs whose FileSinks share a directory and a uid each commit exactly their own records:
neither removes the files of a writer that is still running; and a job whose pending files
something else removed fails, rather than finish without their records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource, FileSink
from lockgate.connectors.errors import ConnectorError
from lockgate.connectors.files import FileTransaction
from lockgate.engine import RestartStrategy, StreamEnvironment
from lockgate.engine.errors import OperatorError
from lockgate.engine.testing import AwaitCheckpoint, FailOnce


class HeldFileSink(FileSink):
    """A FileSink whose first commit of records waits for ``release``; ``holding`` says it does."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.holding = anyio.Event()
        self.release = anyio.Event()

    async def commit(self, txn: FileTransaction) -> None:
        if txn.parts and not self.release.is_set():
            self.holding.set()
            await self.release.wait()
        await super().commit(txn)


class PausedFileSink(FileSink):
    """A FileSink that waits for ``release`` after its first write; ``writing`` says it does."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.writing = anyio.Event()
        self.release = anyio.Event()

    async def write(self, txn: FileTransaction, records: list[Any]) -> None:
        await super().write(txn, records)
        if not self.release.is_set():
            self.writing.set()
            await self.release.wait()


def checkpointed_env(checkpoints: Path, *, restarts: bool = True) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=1, batch_size=64)
    env.enable_checkpointing(0.02)
    env.set_checkpoint_storage(f"file://{checkpoints}")
    strategy = RestartStrategy.fixed_delay(attempts=3, delay=0.0)
    env.set_restart_strategy(strategy if restarts else RestartStrategy.none())
    return env


def lines_of(directory: Path, prefix: str) -> list[str]:
    return sorted(line for line in FileSink(directory).read_lines() if line.startswith(prefix))


async def run_second_job(tmp_path: Path, out: Path, records: list[Any]) -> None:
    env = checkpointed_env(tmp_path / "checkpoints-b")
    env.from_source(CollectionSource(records), uid="b").sink_to(FileSink(out), uid="out")
    await env.execute("b")


async def test_a_second_job_leaves_the_pending_files_of_a_running_job_alone(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    first = [f"a-{n:04}" for n in range(2_000)]
    second = [f"b-{n:04}" for n in range(100)]
    sink = HeldFileSink(out)
    env = checkpointed_env(tmp_path / "checkpoints-a")
    elements = [*first[:1_000], AwaitCheckpoint(), *first[1_000:]]
    env.from_source(CollectionSource(elements), uid="a").sink_to(sink, uid="out")

    with anyio.fail_after(30):
        async with env.start("a") as job:
            await sink.holding.wait()  # the first job's records are pending, not yet committed
            await run_second_job(tmp_path, out, second)
            sink.release.set()
            await job.wait()

    assert lines_of(out, "a-") == first
    assert lines_of(out, "b-") == second


async def test_a_job_restarting_beside_a_running_one_leaves_its_in_progress_files_alone(
    tmp_path: Path,
) -> None:
    out, fail = tmp_path / "out", FailOnce()
    first = [f"a-{n:04}" for n in range(500)]
    second = [f"b-{n:04}" for n in range(200)]
    sink = PausedFileSink(out)
    env = checkpointed_env(tmp_path / "checkpoints-a", restarts=False)  # it must not fail
    env.from_source(CollectionSource(first), uid="a").sink_to(sink, uid="out")
    # the second job fails once after a completed checkpoint, and restores from it
    elements: list[Any] = [*second[:100], AwaitCheckpoint(), *second[100:150], fail]

    with anyio.fail_after(30):
        async with env.start("a") as job:
            await sink.writing.wait()  # the first job's records are in progress
            await run_second_job(tmp_path, out, [*elements, *second[150:]])
            sink.release.set()
            await job.wait()

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert lines_of(out, "a-") == first
    assert lines_of(out, "b-") == second


async def test_a_job_whose_pending_files_were_removed_fails_instead_of_losing_them(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    sink = HeldFileSink(out)
    env = checkpointed_env(tmp_path / "checkpoints")
    records = [f"a-{n:04}" for n in range(200)]
    elements = [*records[:100], AwaitCheckpoint(), *records[100:]]
    env.from_source(CollectionSource(elements), uid="a").sink_to(sink, uid="out")

    with anyio.fail_after(30):
        async with env.start("a") as job:
            await sink.holding.wait()  # pre-committed, and its checkpoint completed
            for path in out.glob(".*.pending"):
                path.unlink()  # as another writer's cleanup did before
            sink.release.set()
            with pytest.raises(
                OperatorError, match=r"'out'.*neither it nor its pending file"
            ) as raised:
                await job.wait()

    assert isinstance(raised.value.__cause__, ConnectorError)
