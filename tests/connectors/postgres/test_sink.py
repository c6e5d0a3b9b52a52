"""PostgresSink against a real server: the transaction protocol of its writers, what they
recover and roll back when they open, upsert, and the options it refuses."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource
from lockgate.connectors.errors import UnencodableRecord
from lockgate.connectors.postgres.sink import PostgresSink
from lockgate.engine import SinkContext, SinkWriter, StreamEnvironment, SystemClock
from tests.connectors.postgres.tables import prepared

pytestmark = pytest.mark.asyncio_only(reason="asyncpg runs on asyncio only")


def context(
    job: str,
    *,
    index: int = 0,
    parallelism: int = 1,
    attempt: int = 0,
    restored: tuple[Any, ...] = (),
) -> SinkContext:
    return SinkContext(
        uid="out",
        subtask_index=index,
        parallelism=parallelism,
        clock=SystemClock(),
        restored_state=restored,
        job_name=job,
        attempt=attempt,
    )


def numbers_sink(dsn: str, table: str, **options: Any) -> PostgresSink[int]:
    return PostgresSink(dsn, table=table, columns=["value"], to_row=lambda v: (v,), **options)


@asynccontextmanager
async def opened(writer: SinkWriter[Any]) -> AsyncIterator[SinkWriter[Any]]:
    """Open ``writer``; close it at the end of the block, as the engine does (also on error)."""
    await writer.open()
    try:
        yield writer
    finally:
        await writer.close()


async def prepare_as_another_run(db: Any, table: str, value: int, gid_suffix: str) -> None:
    await db.execute("BEGIN")
    await db.execute(f"INSERT INTO {table} (value) VALUES ({value})")
    await db.execute(f"PREPARE TRANSACTION 'lockgate/{table}/out/{gid_suffix}'")


async def values(db: Any, table: str) -> list[int]:
    return [row["value"] for row in await db.fetch(f"SELECT value FROM {table} ORDER BY value")]


async def test_rows_stay_invisible_until_their_checkpoint_completes(
    postgres_dsn: str, db: Any, table: str
) -> None:
    async with opened(numbers_sink(postgres_dsn, table).create_writer(context(table))) as writer:
        await writer.write([1, 2])
        await writer.snapshot_state(1)

        assert await values(db, table) == []
        assert len(await prepared(db, table)) == 1
        await writer.notify_checkpoint_complete(1)

    assert await values(db, table) == [1, 2]
    assert await prepared(db, table) == []


async def test_rows_after_the_barrier_wait_for_the_next_checkpoint(
    postgres_dsn: str, db: Any, table: str
) -> None:
    sink = numbers_sink(postgres_dsn, table, batch_size=1)
    async with opened(sink.create_writer(context(table))) as writer:
        await writer.write([1])
        await writer.snapshot_state(1)
        await writer.write([2])
        await writer.notify_checkpoint_complete(1)

    assert await values(db, table) == [1]


async def test_a_transaction_committed_before_is_not_committed_twice_on_recovery(
    postgres_dsn: str, db: Any, table: str
) -> None:
    sink = numbers_sink(postgres_dsn, table)
    async with opened(sink.create_writer(context(table))) as writer:
        await writer.write([7])
        state = await writer.snapshot_state(1)
        await writer.notify_checkpoint_complete(1)

    async with opened(sink.create_writer(context(table, attempt=1, restored=(*state,)))):
        pass

    assert await values(db, table) == [7]


async def test_a_prepared_transaction_of_the_restored_checkpoint_is_committed_on_recovery(
    postgres_dsn: str, db: Any, table: str
) -> None:
    sink = numbers_sink(postgres_dsn, table)
    async with opened(sink.create_writer(context(table))) as writer:
        await writer.write([1, 2, 3])
        state = await writer.snapshot_state(1)  # dies before checkpoint 1's notification

    async with opened(sink.create_writer(context(table, attempt=1, restored=(*state,)))):
        pass

    assert await values(db, table) == [1, 2, 3]
    assert await prepared(db, table) == []


async def test_what_a_writer_prepared_after_the_restored_checkpoint_is_rolled_back(
    postgres_dsn: str, db: Any, table: str
) -> None:
    sink = numbers_sink(postgres_dsn, table)
    async with opened(sink.create_writer(context(table))) as writer:
        await writer.write([1])
        state = await writer.snapshot_state(1)
        await writer.write([2])
        await writer.snapshot_state(2)  # checkpoint 2 never completes

    async with opened(sink.create_writer(context(table, attempt=1, restored=(*state,)))):
        assert await prepared(db, table) == []

    assert await values(db, table) == [1]


async def test_opening_subtask_0_rolls_back_what_other_runs_left_prepared(
    postgres_dsn: str, db: Any, table: str
) -> None:
    await prepare_as_another_run(db, table, 998, "0-0123456789ab/0/1")
    await prepare_as_another_run(db, table, 999, "2-0123456789ab/5/3")

    async with opened(numbers_sink(postgres_dsn, table).create_writer(context(table))):
        assert await prepared(db, table) == []

    assert await values(db, table) == []


async def test_subtask_0_keeps_what_other_subtasks_of_its_attempt_prepared(
    postgres_dsn: str, db: Any, table: str
) -> None:
    sink = numbers_sink(postgres_dsn, table)
    first = sink.create_writer(context(table, index=0, parallelism=2))
    second = sink.create_writer(context(table, index=1, parallelism=2))
    async with opened(second):
        await second.write([2])
        await second.snapshot_state(1)
        async with opened(first):
            await second.notify_checkpoint_complete(1)

    assert await values(db, table) == [2]


async def test_subtask_0_keeps_restored_transactions_that_another_subtask_recovers(
    postgres_dsn: str, db: Any, table: str
) -> None:
    sink = numbers_sink(postgres_dsn, table)
    state: list[Any] = []
    for index in (0, 1):
        async with opened(sink.create_writer(context(table, index=index, parallelism=2))) as w:
            await w.write([index + 1])
            state += await w.snapshot_state(1)  # both die before checkpoint 1's notification
    first = sink.create_writer(context(table, index=0, parallelism=2, attempt=1))
    second = sink.create_writer(
        context(table, index=1, parallelism=2, attempt=1, restored=(*state,))
    )

    async with opened(first), opened(second):
        pass

    assert await values(db, table) == [1, 2]
    assert await prepared(db, table) == []


async def test_a_job_is_not_blocked_by_rows_another_run_left_prepared(
    postgres_dsn: str, db: Any, keyed_table: str
) -> None:
    await prepare_as_another_run(db, keyed_table, 5, "0-0123456789ab/0/1")
    env = StreamEnvironment(parallelism=2)
    env.enable_checkpointing(0.05)
    sink = numbers_sink(postgres_dsn, keyed_table)
    env.from_source(CollectionSource(range(1, 101)), uid="numbers").sink_to(sink, uid="out")

    with anyio.fail_after(30):  # a key that a prepared transaction inserted is locked
        await env.execute(keyed_table)

    assert await values(db, keyed_table) == list(range(1, 101))


def labels_sink(dsn: str, table: str, **options: Any) -> PostgresSink[tuple[int, str]]:
    return PostgresSink(
        dsn,
        table=table,
        columns=["value", "label"],
        mode="upsert",
        key_columns=["value"],
        **options,
    )


async def labels(db: Any, table: str) -> list[tuple[int, str]]:
    rows = await db.fetch(f"SELECT value, label FROM {table} ORDER BY value")
    return [tuple(row) for row in rows]


async def test_an_upsert_checkpoint_commits_every_row_written_before_it(
    postgres_dsn: str, db: Any, keyed_table: str
) -> None:
    async with opened(labels_sink(postgres_dsn, keyed_table).create_writer(context("j"))) as w:
        await w.write([(1, "a"), (2, "b")])
        await w.snapshot_state(1)

        assert await labels(db, keyed_table) == [(1, "a"), (2, "b")]


async def test_an_upsert_written_twice_leaves_one_row_with_the_latest_values(
    postgres_dsn: str, db: Any, keyed_table: str
) -> None:
    async with opened(labels_sink(postgres_dsn, keyed_table).create_writer(context("j"))) as w:
        await w.write([(1, "a"), (2, "b")])
        await w.snapshot_state(1)
        await w.write([(1, "a"), (2, "c")])
        await w.finish()

    assert await labels(db, keyed_table) == [(1, "a"), (2, "c")]


async def test_a_row_of_the_wrong_width_names_the_sink_and_the_columns() -> None:
    sink: PostgresSink[int] = PostgresSink(
        "postgresql://unused",
        table="t",
        columns=["key", "value"],
        mode="upsert",
        key_columns=["key"],
    )
    writer = sink.create_writer(context("job"))

    with pytest.raises(UnencodableRecord, match=r"sink 'out' \(subtask 1/1\).*\['key', 'value'\]"):
        await writer.write([(1,)])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"columns": []}, "needs the table's columns"),
        ({"mode": "upsert"}, "needs key_columns"),
        ({"mode": "upsert", "key_columns": ["id"]}, r"key columns \['id'\] are not among"),
        ({"key_columns": ["value"]}, "apply to mode='upsert' only"),
        ({"batch_size": 0}, "batch_size must be at least 1"),
        ({"mode": "merge"}, "mode must be 'exactly_once' or 'upsert'"),
    ],
)
def test_options_that_make_no_sense_are_refused_when_the_sink_is_built(
    options: dict[str, Any], message: str
) -> None:
    arguments: dict[str, Any] = {"table": "numbers", "columns": ["value"], **options}

    with pytest.raises(ValueError, match=message):
        PostgresSink("postgresql://unused", **arguments)


def test_importing_the_connectors_package_does_not_import_asyncpg() -> None:
    code = "import sys, lockgate.connectors; print('asyncpg' in sys.modules)"

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    assert (result.returncode, result.stdout.strip()) == (0, "False")
