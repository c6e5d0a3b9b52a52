"""One running job per name and checkpoint storage: a second one is refused, in this process or
another, until the first ended or its process died."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    CheckpointStorage,
    FileSystemCheckpointStorage,
    JobError,
    JobStatus,
    MemoryCheckpointStorage,
    StreamEnvironment,
)
from lockgate.engine.checkpointing.storage.job_lock import JobLock
from lockgate.engine.errors import CheckpointStorageError
from tests.engine.jobs.checkpoints import Gate, GatedSource

COUNT, GATE_AT = 1_000, 600

HOLDER = """
import sys
import anyio
from lockgate.engine import FileSystemCheckpointStorage
from lockgate.engine.checkpointing.storage.job_lock import JobLock
from lockgate.engine.errors import CheckpointStorageError

async def main() -> None:
    async with JobLock(FileSystemCheckpointStorage(sys.argv[1]), "sums", run_id="elsewhere"):
        print("held", flush=True)
        await anyio.sleep_forever()

anyio.run(main)
"""


def gated_job(storage: CheckpointStorage, gate: Gate, sink: CollectSink[int]) -> StreamEnvironment:
    env = StreamEnvironment()
    env.enable_checkpointing(interval=0.01)
    env.set_checkpoint_storage(storage)
    env.from_source(GatedSource(COUNT, gate_at=GATE_AT, gate=gate), uid="numbers").sink_to(
        sink, uid="out"
    )
    return env


def short_job(storage: CheckpointStorage, sink: CollectSink[int]) -> StreamEnvironment:
    env = StreamEnvironment()
    env.enable_checkpointing()
    env.set_checkpoint_storage(storage)
    env.from_source(CollectionSource(range(10)), uid="numbers").sink_to(sink, uid="out")
    return env


def storages(tmp_path: Path) -> list[CheckpointStorage]:
    return [FileSystemCheckpointStorage(tmp_path / "checkpoints"), MemoryCheckpointStorage()]


@pytest.mark.parametrize("kind", ["file", "memory"])
async def test_a_second_job_of_a_running_jobs_name_and_storage_is_refused(
    kind: str, tmp_path: Path
) -> None:
    storage = dict(zip(["file", "memory"], storages(tmp_path), strict=True))[kind]
    gate, first, second = Gate(), CollectSink[int](), CollectSink[int]()
    async with gated_job(storage, gate, first).start("sums") as job:
        await gate.reached.wait()
        with pytest.raises(JobError, match="job 'sums' is already running on"):
            await short_job(storage, second).execute("sums")
        gate.opened.set()
        result = await job.wait()

    assert result.status is JobStatus.FINISHED
    assert sorted(first.results) == list(range(COUNT))  # the first job lost nothing
    assert second.results == []


async def test_jobs_of_other_names_or_storages_run_beside_a_running_job(tmp_path: Path) -> None:
    storage, other_storage = storages(tmp_path)
    gate, sinks = Gate(), [CollectSink[int]() for _ in range(3)]
    async with gated_job(storage, gate, sinks[0]).start("sums") as job:
        await gate.reached.wait()
        await short_job(storage, sinks[1]).execute("other")
        await short_job(other_storage, sinks[2]).execute("sums")
        gate.opened.set()
        await job.wait()

    assert [sorted(sink.results) for sink in sinks] == [
        list(range(COUNT)),
        list(range(10)),
        list(range(10)),
    ]


async def test_a_job_runs_again_once_the_run_before_it_ended(tmp_path: Path) -> None:
    storage, sink = storages(tmp_path)[0], CollectSink[int]()
    await short_job(storage, sink).execute("sums")

    result = await short_job(storage, sink).execute("sums")

    assert result.status is JobStatus.FINISHED


async def test_a_lock_file_that_cannot_be_made_is_named_in_the_error(tmp_path: Path) -> None:
    (tmp_path / "not-a-folder").write_text("")
    storage = FileSystemCheckpointStorage(tmp_path / "not-a-folder")
    with pytest.raises(CheckpointStorageError, match=r"cannot lock job 'sums' on .*not-a-folder"):
        async with JobLock(storage, "sums", run_id="here"):
            pass


async def test_the_lock_of_a_process_that_was_killed_is_released(tmp_path: Path) -> None:
    storage = FileSystemCheckpointStorage(tmp_path / "checkpoints")
    async with await anyio.open_process(
        [sys.executable, "-c", HOLDER, str(storage.base_path)]
    ) as holder:
        assert holder.stdout is not None
        said = await BufferedByteReceiveStream(holder.stdout).receive_until(b"\n", 100)
        assert said == b"held"
        with pytest.raises(JobError, match=rf"running .*process {holder.pid}, run elsewhere"):
            async with JobLock(storage, "sums", run_id="here"):
                pass

        holder.send_signal(signal.SIGKILL)
        assert await holder.wait() == -signal.SIGKILL

    async with JobLock(storage, "sums", run_id="here") as lock:
        assert lock.held
