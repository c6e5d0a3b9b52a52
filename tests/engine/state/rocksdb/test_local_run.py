"""A starting job removes the RocksDB folders its runs left when their process was killed, and
never a folder of a run that is alive."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import MemoryCheckpointStorage, StreamEnvironment
from lockgate.engine.state.rocksdb.local_run import LocalRun
from tests.engine.jobs.checkpoints import Gate, GatedSource

COUNT, GATE_AT = 1_000, 600

# A run of "sums" whose process is killed while its database is open: a record has passed
# the keyed sum (which opened it) when the map after it announces itself and blocks.
KILLED_RUN = """
import sys
import threading

import anyio

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import StreamEnvironment


def announce(total: int) -> int:
    print("running", flush=True)
    threading.Event().wait()  # until the parent kills this process
    return total


env = StreamEnvironment()
env.set_state_backend("rocksdb", path=sys.argv[1])
(
    env.from_source(CollectionSource(range(10)), uid="numbers")
    .key_by(lambda number: number % 2)
    .reduce(lambda a, b: a + b, uid="sums")
    .map(announce)
    .sink_to(CollectSink(), uid="out")
)
anyio.run(env.execute, "sums")
"""


class FirstRecord:
    """A map function that sets ``passed`` once a record went through it (in every copy)."""

    def __init__(self) -> None:
        self.passed = anyio.Event()

    def __call__(self, record: Any) -> Any:
        self.passed.set()
        return record

    def __deepcopy__(self, memo: dict[int, Any]) -> FirstRecord:
        return self


def folders(path: Path) -> list[str]:
    return sorted(entry.name for entry in path.iterdir() if entry.is_dir())


def sums_job(databases: Path, source: Any, sink: CollectSink[int], after: Any = None) -> Any:
    env = StreamEnvironment()
    env.set_checkpoint_storage(MemoryCheckpointStorage())
    env.set_state_backend("rocksdb", path=databases)
    (
        env.from_source(source, uid="numbers")
        .key_by(lambda number: number % 2)
        .reduce(lambda a, b: a + b, uid="sums")
        .map(after or (lambda total: total))
        .sink_to(sink, uid="out")
    )
    return env


async def killed_while_running(databases: Path) -> None:
    async with await anyio.open_process([sys.executable, "-c", KILLED_RUN, str(databases)]) as run:
        assert run.stdout is not None
        said = await BufferedByteReceiveStream(run.stdout).receive_until(b"\n", 100)
        assert said == b"running"
        run.kill()
        await run.wait()


async def test_a_starting_job_removes_the_database_folders_of_its_killed_run(
    tmp_path: Path,
) -> None:
    databases = tmp_path / "databases"
    await killed_while_running(databases)
    assert [name for name in folders(databases) if name.startswith("lockgate-sums-")]

    await sums_job(databases, CollectionSource(range(10)), CollectSink()).execute("sums")

    assert folders(databases) == []


async def test_a_starting_job_keeps_the_database_folders_of_a_running_job_of_its_name(
    tmp_path: Path,
) -> None:
    databases, gate, first = tmp_path / "databases", Gate(), FirstRecord()
    running, sink = GatedSource(COUNT, gate_at=GATE_AT, gate=gate), CollectSink[int]()
    async with sums_job(databases, running, sink, first).start("sums") as job:
        await first.passed.wait()
        opened = folders(databases)
        await sums_job(databases, CollectionSource(range(10)), CollectSink()).execute("sums")
        assert folders(databases) == opened != []
        gate.opened.set()
        await job.wait()

    assert sorted(sink.results)[-2:] == [sum(range(0, COUNT, 2)), sum(range(1, COUNT, 2))]
    assert folders(databases) == []


def test_a_claim_leaves_a_folder_without_a_lock_file_alone(tmp_path: Path) -> None:
    (tmp_path / "lockgate-sums-unlocked-a0-sums-0").mkdir()

    LocalRun.claim(tmp_path, "sums", "run").release()

    assert folders(tmp_path) == ["lockgate-sums-unlocked-a0-sums-0"]


def test_a_released_claim_leaves_no_lock_file(tmp_path: Path) -> None:
    claim = LocalRun.claim(tmp_path, "sums", "run")
    assert claim.lock.exists()

    claim.release()

    assert list(tmp_path.iterdir()) == []
