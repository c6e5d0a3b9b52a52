"""PostgresSink across savepoints: its prepared transactions travel in the canonical format, so
a job restored from a savepoint, by a new sink object as a new process would, leaves the table
with every number once (the table has no UNIQUE constraint: a duplicate would show) and
nothing prepared."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from lockgate.connectors.postgres.sink import PostgresSink
from lockgate.engine import StreamEnvironment
from tests.connectors.postgres.tables import prepared
from tests.connectors.savepoint_jobs import Progress
from tests.engine.jobs.savepoints import Topic, TopicSource

pytestmark = pytest.mark.asyncio_only(reason="asyncpg runs on asyncio only")

FIRST, MORE = 600, 400


def numbers_job(topic: Topic, progress: Progress, dsn: str, table: str) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, batch_size=50)
    env.enable_checkpointing(None)
    sink: PostgresSink[int] = PostgresSink(
        dsn, table=table, columns=["value"], to_row=lambda n: (n,), batch_size=100
    )
    numbers = env.from_source(TopicSource(topic), uid="numbers")
    numbers.map(progress, uid="progress").sink_to(sink, uid="out")
    return env


def append(topic: Topic, numbers: range) -> None:
    topic.append(numbers, partition_of=lambda n: n)


async def values(db: Any, table: str) -> list[int]:
    return [row["value"] for row in await db.fetch(f"SELECT value FROM {table} ORDER BY value")]


async def test_a_postgres_job_stopped_with_a_savepoint_and_restored_writes_every_row_once(
    postgres_dsn: str, db: Any, table: str, tmp_path: Path
) -> None:
    topic, progress = Topic(4), Progress()
    job_of = partial(numbers_job, topic, progress, postgres_dsn, table)
    append(topic, range(FIRST))
    with anyio.fail_after(30):
        async with job_of().start(table) as job:
            await progress.wait_passed(FIRST)
            savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    first = await values(db, table)

    append(topic, range(FIRST, FIRST + MORE))
    topic.close()
    with anyio.fail_after(30):
        await job_of().execute(table, restore_from=savepoint)

    assert first == list(range(FIRST))  # the stop committed everything before it
    assert await values(db, table) == list(range(FIRST + MORE))
    assert await prepared(db, table) == []


async def test_a_restore_commits_what_an_intermediate_savepoint_left_prepared(
    postgres_dsn: str, db: Any, table: str, tmp_path: Path
) -> None:
    topic, progress = Topic(4), Progress()
    job_of = partial(numbers_job, topic, progress, postgres_dsn, table)
    append(topic, range(FIRST))
    with anyio.fail_after(30):
        async with job_of().start(table) as job:
            await progress.wait_passed(FIRST)
            savepoint = await job.trigger_savepoint(tmp_path.as_uri())
            job.cancel()  # before any checkpoint commits what the savepoint prepared
    left_prepared = await prepared(db, table)

    topic.close()
    with anyio.fail_after(30):
        await job_of().execute(table, restore_from=savepoint)

    assert left_prepared, "the savepoint prepared nothing: the test proves nothing"
    assert await values(db, table) == list(range(FIRST))
    assert await prepared(db, table) == []
