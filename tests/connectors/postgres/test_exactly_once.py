"""PostgresSink across failures, as Flink tests it: a failure injected once, after a completed
checkpoint and a record since, a guard that it fired, and the table's read-committed view
compared with the exact sequence. Exactly-once tables have no UNIQUE constraint, so a duplicate
would show; the upsert table has its key, and a replay must rewrite rows, never add any."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from lockgate.connectors import CollectionSource
from lockgate.connectors.postgres.sink import PostgresSink
from lockgate.engine import (
    JobError,
    RestartStrategy,
    Sink,
    SinkContext,
    SinkWriter,
    StreamEnvironment,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.connectors.postgres.tables import prepared

pytestmark = pytest.mark.asyncio_only(reason="asyncpg runs on asyncio only")

N = 10_000
Moment = Literal["after_pre_commit", "before_commit"]


class DyingSink(Sink[Any]):
    """A PostgresSink whose writers die once, after records written since a completed
    checkpoint: right after pre-committing the next checkpoint (it never completes), or when
    it completed but before committing it. ``written`` counts records of every attempt."""

    def __init__(self, sink: PostgresSink[Any], fail: FailOnce, moment: Moment) -> None:
        self.sink, self.fail, self.moment = sink, fail, moment
        self.written = 0

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        return DyingWriter(self, self.sink.create_writer(context))


class DyingWriter(SinkWriter[Any]):
    def __init__(self, dying: DyingSink, writer: SinkWriter[Any]) -> None:
        self.writer, self.fail, self.moment, self.dying = writer, dying.fail, dying.moment, dying
        self.completed = self.written_since = False

    async def open(self) -> None:
        await self.writer.open()

    async def write(self, records: list[Any]) -> None:
        await self.writer.write(records)
        self.written_since = self.completed
        self.dying.written += len(records)

    async def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        items = await self.writer.snapshot_state(checkpoint_id)
        if self.moment == "after_pre_commit" and self.written_since:
            self.fail.maybe_fire()
        return items

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        if self.moment == "before_commit" and self.written_since:
            self.fail.maybe_fire()
        await self.writer.notify_checkpoint_complete(checkpoint_id)
        self.completed = True

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        await self.writer.notify_checkpoint_aborted(checkpoint_id)

    async def finish(self) -> None:
        await self.writer.finish()

    async def close(self) -> None:
        await self.writer.close()


async def values(db: Any, table: str) -> list[int]:
    return [row["value"] for row in await db.fetch(f"SELECT value FROM {table} ORDER BY value")]


def checkpointed_env(parallelism: int, *, restarts: int) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=parallelism, batch_size=256, channel_capacity=1024)
    env.enable_checkpointing(0.02)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=restarts, delay=0.0))
    return env


def numbers() -> CollectionSource[int]:
    """1..N; the reader waits at N/2 until a checkpoint completes."""
    return CollectionSource([*range(1, N // 2 + 1), AwaitCheckpoint(), *range(N // 2 + 1, N + 1)])


def numbers_sink(dsn: str, table: str) -> PostgresSink[int]:
    return PostgresSink(dsn, table=table, columns=["value"], to_row=lambda v: (v,), batch_size=500)


def failing_at(value: int, fail: FailOnce) -> Any:
    def identity(number: int) -> int:
        if number == value:
            fail.maybe_fire()
        return number

    return identity


@pytest.mark.parametrize("parallelism", [1, 3])
async def test_the_table_holds_every_number_exactly_once_across_a_failure(
    postgres_dsn: str, db: Any, table: str, parallelism: int
) -> None:
    fail = FailOnce()
    env = checkpointed_env(parallelism, restarts=3)
    (
        env.from_source(numbers(), uid="numbers", parallelism=1)
        .rebalance()
        .map(failing_at(N // 2 + 500, fail), uid="fails-once")  # past the awaited checkpoint
        .sink_to(numbers_sink(postgres_dsn, table), uid="out")
    )

    await env.execute(table)

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert await values(db, table) == list(range(1, N + 1))
    assert await prepared(db, table) == []


@pytest.mark.parametrize("moment", ["after_pre_commit", "before_commit"])
@pytest.mark.parametrize("parallelism", [1, 3])
async def test_a_restart_resolves_what_the_failed_attempt_left_prepared(
    postgres_dsn: str, db: Any, table: str, parallelism: int, moment: Moment
) -> None:
    fail = FailOnce()
    env = checkpointed_env(parallelism, restarts=3)
    sink = DyingSink(numbers_sink(postgres_dsn, table), fail, moment)
    env.from_source(numbers(), uid="numbers", parallelism=1).rebalance().sink_to(sink, uid="out")

    await env.execute(table)

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert await values(db, table) == list(range(1, N + 1))
    assert await prepared(db, table) == []


@pytest.mark.parametrize("moment", ["after_pre_commit", "before_commit"])
@pytest.mark.parametrize("parallelism", [1, 3])
async def test_a_new_run_from_the_latest_checkpoint_resolves_what_a_killed_run_left_prepared(
    postgres_dsn: str, db: Any, table: str, parallelism: int, moment: Moment
) -> None:
    fail = FailOnce()
    env = checkpointed_env(parallelism, restarts=0)
    sink = DyingSink(numbers_sink(postgres_dsn, table), fail, moment)
    env.from_source(numbers(), uid="numbers", parallelism=1).rebalance().sink_to(sink, uid="out")
    with pytest.raises(JobError):
        await env.execute(table)
    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert await prepared(db, table) != [], "the killed run left nothing prepared to resolve"

    await env.execute(table, restore_from="latest")

    assert await values(db, table) == list(range(1, N + 1))
    assert await prepared(db, table) == []


@pytest.mark.parametrize("parallelism", [1, 3])
async def test_a_fresh_start_rolls_back_what_a_killed_run_left_prepared(
    postgres_dsn: str, db: Any, table: str, parallelism: int
) -> None:
    fail = FailOnce()
    env = checkpointed_env(parallelism, restarts=0)
    sink = DyingSink(numbers_sink(postgres_dsn, table), fail, "after_pre_commit")
    env.from_source(numbers(), uid="numbers", parallelism=1).rebalance().sink_to(sink, uid="out")
    with pytest.raises(JobError):
        await env.execute(table)
    await db.execute(f"DELETE FROM {table}")  # a fresh start writes everything again
    assert await prepared(db, table) != [], "the killed run left nothing prepared to resolve"

    await env.execute(table)

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert await values(db, table) == list(range(1, N + 1))
    assert await prepared(db, table) == []


async def test_upsert_mode_replays_rewrite_rows_without_adding_any(
    postgres_dsn: str, db: Any, keyed_table: str
) -> None:
    fail = FailOnce()
    env = checkpointed_env(3, restarts=3)
    upsert: PostgresSink[int] = PostgresSink(
        postgres_dsn,
        table=keyed_table,
        columns=["value", "label"],
        to_row=lambda v: (v, f"label-{v}"),
        mode="upsert",
        key_columns=["value"],
        batch_size=100,
    )
    sink = DyingSink(upsert, fail, "after_pre_commit")  # its pre-commit commits the rows
    env.from_source(numbers(), uid="numbers", parallelism=1).rebalance().sink_to(sink, uid="out")

    await env.execute(keyed_table)

    rows = await db.fetch(f"SELECT value, label FROM {keyed_table} ORDER BY value")
    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert sink.written > N, "nothing was replayed: the test proves nothing"
    assert [tuple(row) for row in rows] == [(v, f"label-{v}") for v in range(1, N + 1)]
