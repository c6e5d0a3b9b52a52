"""job.query_state(uid, state_name, key) reads one key's keyed state of a running job, from
the subtask that owns its key group: every state kind, both backends, after a restore from
a savepoint at another parallelism and after a restart; clear errors otherwise."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    JobRestarting,
    JobStatus,
    ManualClock,
    QueryStateError,
    RestartStrategy,
    StreamEnvironment,
)
from lockgate.engine.testing import FailOnce
from tests.engine.api.test_job_client_lifecycle import always_fails, next_of
from tests.engine.jobs.queryable import (
    EveryKind,
    FedSource,
    Feed,
    ProcessedSink,
    answers,
    every_kind_job,
    expected,
)

BACKENDS = ("memory", "rocksdb")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_query_state_reads_every_keyed_state_kind_of_a_running_job(backend: str) -> None:
    feed, sink = Feed(), ProcessedSink()

    with anyio.fail_after(20):
        async with every_kind_job(feed, sink, parallelism=2, backend=backend).start("q") as job:
            feed.release(200)
            await sink.wait_for(200)
            read = await answers(job)
            job.cancel()

    assert read == expected(range(200))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_query_state_after_a_restore_from_a_savepoint_at_another_parallelism(
    backend: str, tmp_path: Path
) -> None:
    first, second = ProcessedSink(), ProcessedSink()
    feed = Feed()

    with anyio.fail_after(30):
        async with every_kind_job(feed, first, parallelism=2, backend=backend).start("q") as job:
            feed.release(120)
            await first.wait_for(120)
            savepoint = await job.stop_with_savepoint(str(tmp_path))
        rescaled = every_kind_job(feed, second, parallelism=3, backend=backend)
        async with rescaled.start("q", restore_from=savepoint) as job:
            feed.release(200)
            await second.wait_for(80)
            read = await answers(job)
            job.cancel()

    assert read == expected(range(200))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_query_state_after_an_injected_failure_reads_the_restored_state_exactly(
    backend: str,
) -> None:
    fail, feed, sink = FailOnce(), Feed(), ProcessedSink()
    function = EveryKind(fail, at=150)
    env = every_kind_job(feed, sink, backend=backend, function=function)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))

    with anyio.fail_after(30):
        async with env.start("q") as job:
            feed.release(100)
            await sink.wait_for(100)
            await job.trigger_checkpoint()  # covers 0..99; the failure at 150 comes after it
            feed.release(200)
            await sink.wait_for(100, attempt=1)  # attempt 1 replays 100..199 from it
            read = await answers(job)
            job.cancel()

    assert fail.fired, "the injected failure never fired"
    assert read == expected(range(200))


async def test_query_state_on_trio_reads_the_running_jobs_state() -> None:
    async def query() -> object:
        feed, sink = Feed(), ProcessedSink()
        with anyio.fail_after(20):
            async with every_kind_job(feed, sink).start("q") as job:
                feed.release(50)
                await sink.wait_for(50)
                read = await answers(job)
                job.cancel()
        return read

    read = await anyio.to_thread.run_sync(lambda: anyio.run(query, backend="trio"))

    assert read == expected(range(50))


async def test_a_query_made_while_the_job_starts_waits_for_its_subtasks() -> None:
    feed, sink = Feed(), ProcessedSink()

    with anyio.fail_after(20):
        async with every_kind_job(feed, sink).start("q") as job:
            status = job.status
            read = await job.query_state("every", "last", 3)
            job.cancel()

    assert (status, read) == (JobStatus.CREATED, -1)


async def test_a_query_to_a_busy_subtask_is_answered_at_its_next_turn() -> None:
    feed, sink = Feed(), ProcessedSink(hold=True)
    result: list[object] = []

    async def query() -> None:
        result.append(await job.query_state("every", "total", 0))

    with anyio.fail_after(20):
        async with every_kind_job(feed, sink, parallelism=1).start("q") as job:
            feed.release(10)
            await sink.held.wait()  # its loop waits in the sink: it takes no control message
            async with anyio.create_task_group() as group:
                group.start_soon(query)
                await anyio.wait_all_tasks_blocked()
                unanswered = list(result)
                sink.release()
            job.cancel()

    assert (unanswered, result) == ([], [5])


async def test_a_query_its_attempt_leaves_unanswered_raises_saying_so() -> None:
    feed, sink = Feed(), ProcessedSink(hold=True)
    errors: list[QueryStateError] = []

    async def query() -> None:
        try:
            await job.query_state("every", "total", 0)
        except QueryStateError as error:
            errors.append(error)

    with anyio.fail_after(20):
        async with every_kind_job(feed, sink, parallelism=1).start("q") as job:
            feed.release(10)
            await sink.held.wait()
            async with anyio.create_task_group() as group:
                group.start_soon(query)
                await anyio.wait_all_tasks_blocked()
                job.cancel()  # the subtask stops in the sink, before its next turn

    assert [str(error) for error in errors] == [
        "the query for state 'total' of operator 'every' (subtask 1/1) got no answer: the "
        "attempt that was to answer it ended first (it failed, or the job is stopping); query "
        "again once job.status is RUNNING"
    ]


async def test_queries_a_busy_subtask_holds_leave_room_for_its_checkpoint_messages() -> None:
    feed, sink = Feed(), ProcessedSink(hold=True)

    with anyio.fail_after(20):
        async with every_kind_job(feed, sink, parallelism=1).start("q") as job:
            feed.release(10)
            await sink.held.wait()
            with anyio.CancelScope() as callers:  # callers that give up before an answer
                async with anyio.create_task_group() as group:
                    for _ in range(300):
                        group.start_soon(job.query_state, "every", "total", 0)
                    await anyio.wait_all_tasks_blocked()
                    callers.cancel()
            async with anyio.create_task_group() as group:
                group.start_soon(job.trigger_checkpoint)
                await anyio.wait_all_tasks_blocked()
                sink.release()
            total = await job.query_state("every", "total", 0)
            job.cancel()

    assert (job.failures, total) == ((), 5)


async def test_an_unknown_uid_is_refused_naming_the_operators_with_keyed_state() -> None:
    feed, sink = Feed(), ProcessedSink()

    async with every_kind_job(feed, sink).start("q") as job:
        with pytest.raises(QueryStateError) as refused:
            await job.query_state("evry", "total", 0)
        job.cancel()

    assert str(refused.value) == (
        "job 'q' has no operator 'evry'; its operators with keyed state are 'every'"
    )


async def test_an_operator_without_keyed_state_is_refused() -> None:
    feed, sink = Feed(), ProcessedSink()

    async with every_kind_job(feed, sink).start("q") as job:
        with pytest.raises(QueryStateError, match="'numbers' of job 'q' is a source operator"):
            await job.query_state("numbers", "total", 0)
        job.cancel()


async def test_an_unknown_state_is_refused_listing_the_operators_states() -> None:
    feed, sink = Feed(), ProcessedSink()

    with anyio.fail_after(20):
        async with every_kind_job(feed, sink).start("q") as job:
            with pytest.raises(QueryStateError) as refused:
                await job.query_state("every", "count", 0)
            job.cancel()

    assert str(refused.value) == (
        "operator 'every' (subtask 2/2) has no keyed state 'count'; its keyed states are "
        "'by_digit', 'last', 'mean', 'numbers', 'total'"
    )


async def test_a_key_that_cannot_be_routed_is_refused() -> None:
    feed, sink = Feed(), ProcessedSink()

    async with every_kind_job(feed, sink).start("q") as job:
        with pytest.raises(QueryStateError, match="cannot route key"):
            await job.query_state("every", "total", object())
        job.cancel()


async def test_a_restarting_job_refuses_queries_saying_when_to_query_again() -> None:
    env = StreamEnvironment(clock=ManualClock())  # never advanced: the restart delay never passes
    env.enable_checkpointing(1.0)
    env.from_source(CollectionSource(range(10)), uid="numbers").map(
        always_fails, uid="broken"
    ).key_by(lambda n: n % 2).reduce(lambda a, b: a + b, uid="sums").sink_to(
        CollectSink(), uid="out"
    )

    with anyio.fail_after(10):
        async with env.start("broken") as job:
            await next_of(job.events(), JobRestarting)
            with pytest.raises(QueryStateError) as refused:
                await job.query_state("sums", "reduced", 0)
            job.cancel()

    assert str(refused.value).startswith(
        "job 'broken' is restarting: attempt 0 failed (OperatorError(\"operator 'broken' "
    )
    assert str(refused.value).endswith("query again once job.status is RUNNING")


async def test_a_finished_job_refuses_queries_saying_its_state_is_gone() -> None:
    env = StreamEnvironment()
    env.from_source(CollectionSource(range(10)), uid="numbers").key_by(lambda n: n % 2).reduce(
        lambda a, b: a + b, uid="sums"
    ).sink_to(CollectSink(), uid="out")

    async with env.start("sums") as job:
        await job.wait()
        with pytest.raises(QueryStateError) as refused:
            await job.query_state("sums", "reduced", 0)

    assert str(refused.value) == (
        "job 'sums' has finished and its subtasks with it; read its state from a savepoint "
        "or checkpoint with read_snapshot()"
    )


async def test_a_reduce_keeps_its_running_value_in_the_state_named_reduced() -> None:
    feed, sink = Feed(), ProcessedSink()
    env = StreamEnvironment(parallelism=2)
    env.from_source(FedSource(feed), uid="numbers", parallelism=1).key_by(lambda n: n % 3).reduce(
        lambda a, b: a + b, uid="sums"
    ).sink_to(sink, uid="out")

    with anyio.fail_after(20):
        async with env.start("sums") as job:
            feed.release(30)
            await sink.wait_for(30)
            sums = [await job.query_state("sums", "reduced", key) for key in range(3)]
            job.cancel()

    assert sums == [sum(range(key, 30, 3)) for key in range(3)]
