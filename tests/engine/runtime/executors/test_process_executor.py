"""ProcessExecutor: the same job in worker processes, with exact results across failures."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink, FileSink
from lockgate.engine import (
    JobRestarting,
    JobStatus,
    ProcessExecutor,
    StreamEnvironment,
    WorkerLost,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.runtime.executors.conftest import worker_processes
from tests.engine.runtime.executors.jobs import (
    Arrivals,
    WorkerKiller,
    file_checkpointed_env,
    identity,
)

N = 4_000


def doubled(tmp_path: Path, elements: list[object], sink: CollectSink[int]) -> StreamEnvironment:
    env = file_checkpointed_env(tmp_path)
    env.from_source(CollectionSource(elements), uid="numbers").map(
        lambda n: n * 2, uid="double"
    ).sink_to(sink, uid="out")
    return env


async def test_a_job_runs_in_two_worker_processes_with_exact_results(tmp_path: Path) -> None:
    sink = CollectSink[int]()
    env = doubled(tmp_path, list(range(N)), sink)

    with anyio.fail_after(60):
        result = await env.execute("doubled", executor=ProcessExecutor(workers=2))

    assert result.status is JobStatus.FINISHED
    assert sorted(sink.results) == [n * 2 for n in range(N)]


async def test_an_injected_failure_after_a_checkpoint_is_restored_exactly_once(
    tmp_path: Path,
) -> None:
    fail, sink = FailOnce(), CollectSink[int]()
    # the first split waits for a completed checkpoint at 1,000 and fails 500 records later
    elements = [*range(1_000), AwaitCheckpoint(), *range(1_000, 1_500), fail, *range(1_500, N)]
    env = doubled(tmp_path, elements, sink)

    with anyio.fail_after(60):
        async with env.start("doubled", executor=ProcessExecutor(workers=2)) as job:
            await job.wait()

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert sorted(sink.results) == [n * 2 for n in range(N)]
    assert [type(f.exception).__name__ for f in job.failures] == ["OperatorError"]


async def test_no_worker_process_outlives_its_job(tmp_path: Path) -> None:
    executor = ProcessExecutor(workers=2)
    env = doubled(tmp_path, list(range(100)), CollectSink[int]())

    with anyio.fail_after(60):
        await env.execute("doubled", executor=executor)

    assert executor.statistics().started == 2
    assert executor.statistics().running == ()
    assert worker_processes() == []


def waiting_at_sentinels(tmp_path: Path, arrivals: Arrivals) -> StreamEnvironment:
    """A job whose two readers wait for ever at a sentinel after their first records."""
    env = file_checkpointed_env(tmp_path)
    env.enable_checkpointing(None)  # only checkpoints asked for: none
    elements = [*range(100), AwaitCheckpoint(), *range(100, 200), AwaitCheckpoint()]
    env.from_source(CollectionSource(elements), uid="numbers").map(
        arrivals, uid="arrivals"
    ).sink_to(CollectSink(), uid="out")
    return env


async def test_a_cancelled_job_leaves_no_worker_process(tmp_path: Path) -> None:
    executor, arrivals = ProcessExecutor(workers=2), Arrivals()
    env = waiting_at_sentinels(tmp_path, arrivals)

    with anyio.fail_after(60):
        async with env.start("waits", executor=executor) as job:
            await arrivals.wait(2)
            job.cancel()

    assert job.status is JobStatus.CANCELED
    assert executor.statistics().running == ()


@pytest.mark.parametrize("seed", range(5))
async def test_a_worker_killed_mid_run_fails_the_attempt_and_files_commit_exactly(
    tmp_path: Path, seed: int
) -> None:
    killer = WorkerKiller(at=1_000 + 250 * seed)
    env = file_checkpointed_env(tmp_path)
    sink = FileSink(tmp_path / "out")
    numbers = [*range(500), AwaitCheckpoint(), *range(500, N)]
    (
        env.from_source(CollectionSource(numbers), uid="numbers")
        .map(killer, uid="kills-its-worker")
        .map(identity, uid="same")
        .sink_to(sink, uid="out")
    )

    with anyio.fail_after(60):
        async with env.start("killed", executor=ProcessExecutor(workers=2)) as job:
            await job.wait()

    assert killer.killed, "no worker was killed: the test proves nothing"
    assert sorted(int(line) for line in sink.read_lines()) == list(range(N))
    lost = [f.exception for f in job.failures]
    assert [type(e) for e in lost] == [WorkerLost]
    assert f"pid {killer.killed[0]}" in str(lost[0])
    assert "killed by signal 9 (SIGKILL)" in str(lost[0])


async def test_a_worker_that_stops_answering_heartbeats_fails_the_attempt(
    tmp_path: Path,
) -> None:
    arrivals = Arrivals()
    env = waiting_at_sentinels(tmp_path, arrivals)
    executor = ProcessExecutor(workers=2, heartbeat_interval=0.05, heartbeat_timeout=0.5)

    with anyio.fail_after(60):
        async with env.start("hangs", executor=executor) as job:
            events = job.events()
            await arrivals.wait(2)
            stopped = min(arrivals.pids)
            os.kill(stopped, signal.SIGSTOP)
            async for event in events:
                if isinstance(event, JobRestarting):
                    break
            job.cancel()

    assert isinstance(event.cause, WorkerLost)
    assert f"pid {stopped}" in str(event.cause)
    assert "sent no heartbeat for 0.5 s" in str(event.cause)
    assert executor.statistics().running == ()


async def test_metrics_report_the_subtasks_of_every_worker(tmp_path: Path) -> None:
    env = doubled(tmp_path, list(range(N)), CollectSink[int]())

    with anyio.fail_after(60):
        result = await env.execute("doubled", executor=ProcessExecutor(workers=2))

    subtasks = result.metrics.subtasks
    assert [m.key for m in subtasks] == ["numbers#0", "numbers#1"]
    assert all(m.finished for m in subtasks)
    assert sum(m.records_in for m in subtasks) == N


def add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0], a[1] + b[1]


async def test_records_cross_a_keyed_edge_between_workers_exactly_once_across_a_failure(
    tmp_path: Path,
) -> None:
    fail, sink = FailOnce(), CollectSink[tuple[int, int]]()
    env = file_checkpointed_env(tmp_path)
    elements = [*range(5_000), AwaitCheckpoint(), *range(5_000, 7_500), fail, *range(7_500, 10_000)]
    (
        env.from_source(CollectionSource(elements), uid="numbers", parallelism=1)
        .map(lambda n: (n % 10, 1), uid="pairs")
        .key_by(lambda pair: pair[0])
        .reduce(add, uid="counts")
        .sink_to(sink, uid="out")
    )

    with anyio.fail_after(60):
        async with env.start("counts", executor=ProcessExecutor(workers=2)) as job:
            await job.wait()

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    counts: dict[int, list[int]] = {}
    for key, count in sink.results:
        counts.setdefault(key, []).append(count)
    assert counts == {key: list(range(1, 1_001)) for key in range(10)}
    assert [type(f.exception).__name__ for f in job.failures] == ["OperatorError"]
