"""FileSink end to end: across an injected failure and across a killed attempt, the committed
lines are exactly the records, each once, and no hidden part file is left behind."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from lockgate.connectors import CollectionSource, FileSink
from lockgate.connectors.files import FileTransaction
from lockgate.engine import (
    RestartStrategy,
    Source,
    SourceContext,
    SourceReader,
    SourceSplit,
    StreamEnvironment,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce

N = 20_000


def checkpointed_env(tmp_path: Path, parallelism: int, interval: float | None) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=parallelism, batch_size=256)
    env.enable_checkpointing(interval)
    env.set_checkpoint_storage(f"file://{tmp_path / 'checkpoints'}")
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    return env


def committed_numbers(sink: FileSink) -> list[int]:
    return sorted(int(line) for line in sink.read_lines())


def hidden_files(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir() if path.name.startswith("."))


def failing_at(fail: FailOnce, value: int) -> Any:
    def identity(number: int) -> int:
        if number == value:
            fail.maybe_fire()
        return number

    return identity


@pytest.mark.parametrize("parallelism", [1, 3])
async def test_committed_lines_are_every_number_once_across_a_failure(
    tmp_path: Path, parallelism: int
) -> None:
    fail = FailOnce()
    env = checkpointed_env(tmp_path, parallelism, interval=0.02)
    sink = FileSink(tmp_path / "out")
    # the first split waits for a completed checkpoint at 2,000, and fails 1,000 records later
    numbers = [*range(1, 2_000), AwaitCheckpoint(), *range(2_000, N + 1)]
    (
        env.from_source(CollectionSource(numbers), uid="numbers")
        .map(failing_at(fail, 3_000), uid="fails-once")
        .sink_to(sink, uid="out")
    )

    with anyio.fail_after(30):
        await env.execute("numbers-to-files")

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert committed_numbers(sink) == list(range(1, N + 1))
    assert hidden_files(sink.directory) == []


@dataclass
class Pause:
    """Where a ``PausingSource`` reader waits until ``go`` is set; shared by every copy."""

    at: int
    reached: anyio.Event = field(default_factory=anyio.Event)
    go: anyio.Event = field(default_factory=anyio.Event)

    def __deepcopy__(self, memo: dict[int, Any]) -> Pause:
        return self


class PausingSource(Source[int]):
    """Reads ``range(count)`` with one reader, waiting at each pause until it is let go."""

    def __init__(self, count: int, *pauses: Pause) -> None:
        self.count = count
        self.pauses = pauses

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit("all", 0)]

    def create_reader(self, splits: Sequence[SourceSplit], context: SourceContext) -> _Pausing:
        return _Pausing(self, splits[0].position if splits else self.count)


class _Pausing(SourceReader[int]):
    def __init__(self, source: PausingSource, position: int) -> None:
        self.source = source
        self.next = position

    async def read(self, max_records: int) -> list[int]:
        await anyio.lowlevel.checkpoint()
        for pause in self.source.pauses:
            if pause.at == self.next:
                pause.reached.set()
                await pause.go.wait()
        ahead = [pause.at for pause in self.source.pauses if pause.at > self.next]
        stop = min([*ahead, self.source.count, self.next + max_records])
        batch = list(range(self.next, stop))
        self.next = stop
        return batch

    def snapshot_splits(self) -> list[SourceSplit]:
        return [SourceSplit("all", self.next)]


class KilledFileSink(FileSink):
    """A FileSink whose aborts leave in-progress files behind, as a killed process does.

    ``wrote`` is set once a record equal to ``signal_at`` was written.
    """

    def __init__(self, directory: Path, *, signal_at: int) -> None:
        super().__init__(directory)
        self.signal_at = signal_at
        self.wrote = anyio.Event()

    async def write(self, txn: FileTransaction, records: list[Any]) -> None:
        await super().write(txn, records)
        if self.signal_at in records:
            self.wrote.set()

    async def abort(self, txn: FileTransaction) -> None:
        paths = [txn.hidden_path(part, "inprogress") for part in txn.parts]
        kept = {path: path.read_bytes() for path in paths if path.exists()}
        await super().abort(txn)
        for path, data in kept.items():
            path.write_bytes(data)


async def run_until_killed(tmp_path: Path, out: Path) -> None:
    """Checkpoint after 1,000 records, write 1,000 more, then end as if the process died."""
    checkpointed, halted = Pause(1_000), Pause(2_000)
    env = checkpointed_env(tmp_path, 1, interval=None)
    sink = KilledFileSink(out, signal_at=1_999)
    env.from_source(PausingSource(3_000, checkpointed, halted), uid="numbers").sink_to(
        sink, uid="out"
    )
    async with env.start("killed") as job:
        await checkpointed.reached.wait()
        await job.trigger_checkpoint()
        checkpointed.go.set()
        await sink.wrote.wait()
        job.cancel()


async def test_a_restored_job_removes_what_a_killed_attempt_left_and_commits_exactly(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    with anyio.fail_after(10):
        await run_until_killed(tmp_path, out)
    left = hidden_files(out)
    env = checkpointed_env(tmp_path, 1, interval=None)
    sink = FileSink(out)
    env.from_source(PausingSource(3_000), uid="numbers").sink_to(sink, uid="out")

    with anyio.fail_after(10):
        await env.execute("killed", restore_from="latest")

    assert sorted(name.rsplit(".", 1)[-1] for name in left) == ["committed", "inprogress"]
    assert committed_numbers(sink) == list(range(3_000))
    assert hidden_files(out) == []
