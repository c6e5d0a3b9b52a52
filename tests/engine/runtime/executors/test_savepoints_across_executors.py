"""Savepoints move freely between executors: taken in worker processes, restored on this
loop at another parallelism, and the other way round; keyed state moves with its key
groups, and every record is counted once."""

from __future__ import annotations

from pathlib import Path

import anyio

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import Executor, LocalExecutor, ProcessExecutor, StreamEnvironment
from lockgate.engine.testing import AwaitCheckpoint
from tests.engine.runtime.executors.jobs import Arrivals, file_checkpointed_env

N = 2_000


KEYS = 7


def add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0], a[1] + b[1]


def counting_job(
    tmp_path: Path, parallelism: int, sink: CollectSink[tuple[int, int]], arrivals: Arrivals
) -> StreamEnvironment:
    """Counts per key; each reader emits some records, then waits at a sentinel until a
    checkpoint completes."""
    env = file_checkpointed_env(tmp_path, parallelism=parallelism)
    elements = [*range(500), AwaitCheckpoint(), *range(500, 1_500), AwaitCheckpoint()]
    elements += range(1_500, N)
    (
        env.from_source(CollectionSource(elements), uid="numbers")
        .map(arrivals, uid="arrivals")
        .map(lambda n: (n % KEYS, 1), uid="ones")
        .key_by(lambda pair: pair[0])
        .reduce(add, uid="counts")
        .sink_to(sink, uid="out")
    )
    return env


def counted_once(results: list[tuple[int, int]]) -> bool:
    """Whether every key counted 1, 2, ... up to its number of records, each once."""
    counts: dict[int, list[int]] = {}
    for key, count in results:
        counts.setdefault(key, []).append(count)
    expected = {key: len(range(key, N, KEYS)) for key in range(KEYS)}
    return {key: sorted(c) for key, c in counts.items()} == {
        key: list(range(1, total + 1)) for key, total in expected.items()
    }


async def savepoint_of(
    env: StreamEnvironment, arrivals: Arrivals, workers: int, executor: Executor, target: Path
) -> str:
    """Start the job, wait until it ran in ``workers`` processes, stop it with a savepoint."""
    env.enable_checkpointing(None)  # the readers wait at their sentinels: nothing more flows
    async with env.start("counting", executor=executor) as job:
        await arrivals.wait(workers)
        return await job.stop_with_savepoint(target.as_uri())


async def test_a_savepoint_taken_in_worker_processes_restores_locally_at_another_parallelism(
    tmp_path: Path,
) -> None:
    sink, arrivals = CollectSink[tuple[int, int]](), Arrivals()
    before = counting_job(tmp_path, 2, sink, arrivals)
    with anyio.fail_after(60):
        executor = ProcessExecutor(workers=2)
        savepoint = await savepoint_of(before, arrivals, 2, executor, tmp_path / "sp")
        after = counting_job(tmp_path, 3, sink, Arrivals())
        await after.execute("counting", restore_from=savepoint, executor=LocalExecutor())

    assert counted_once(sink.results)


async def test_a_savepoint_taken_locally_restores_in_worker_processes(tmp_path: Path) -> None:
    sink, arrivals = CollectSink[tuple[int, int]](), Arrivals()
    before = counting_job(tmp_path, 1, sink, arrivals)
    with anyio.fail_after(60):
        savepoint = await savepoint_of(before, arrivals, 1, LocalExecutor(), tmp_path / "sp")
        after = counting_job(tmp_path, 2, sink, Arrivals())
        await after.execute("counting", restore_from=savepoint, executor=ProcessExecutor())

    assert counted_once(sink.results)
