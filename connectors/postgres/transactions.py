"""PostgresSink's exactly-once writer: prepared transactions committed on checkpoint completion.

``mode="exactly_once"`` (the default) is **exactly-once**. Each subtask writes into a database
transaction, prepares it (``PREPARE TRANSACTION``) at the checkpoint barrier and commits it
(``COMMIT PREPARED``) when the checkpoint completes, so a row becomes visible once, and only
once the checkpoint that covers it is durable.

Transaction ids (gids) are ``lockgate/<job>/<uid>/<epoch>/<subtask>/<n>``: job name and sink
uid, percent-encoded, fence a job's ids; the epoch, ``<attempt>-<12 random hex digits>``, is
new for every attempt of every run, so no id is ever used twice; ``n`` counts a subtask's
transactions from 1. Because an id is never reused, an id that a completed checkpoint
recorded as prepared and that is no longer in ``pg_prepared_xacts`` was committed (recovery
never rolls such an id back): that is what makes ``commit`` idempotent.

Recovery, before a subtask begins its first transaction:

1. It commits the prepared transactions of the restored checkpoint that it received.
2. For each transaction it received as open, it rolls back every transaction the same writer
   prepared from that one on: checkpoints after the restored one never completed.
3. Subtask 0 rolls back every other prepared transaction of the job and uid whose epoch is
   neither this attempt's nor the restored checkpoint's (killed runs, attempts that failed
   before completing a checkpoint), so no zombie's transaction can be committed later.

A checkpoint holds only transactions of the attempt that took it (an attempt resolves what
it restored before its first checkpoint). Step 3 needs that epoch and this attempt's: the
sink object shares both among the subtasks of an attempt, so they must run in one process.
Once the attempt's first checkpoint completes (every subtask has recovered), subtask 0 rolls
back whatever else of other epochs is still prepared.
"""

from __future__ import annotations

import contextlib
import itertools
import secrets
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar
from urllib.parse import quote

from lockgate.connectors.errors import ConnectorError
from lockgate.connectors.postgres.connection import (
    _close,
    _connect,
    _connected,
    _Connection,
    _roll_back_open,
    asyncpg,
)
from lockgate.connectors.postgres.table import Row, _RowEncoder
from lockgate.engine.io.sinks import SinkContext, TwoPhaseCommitSink, TwoPhaseCommitWriter
from lockgate.engine.io.transactions import TransactionLog

__all__ = ["PostgresTransaction"]

T = TypeVar("T")

_MAX_PREFIX_BYTES = 160  # PostgreSQL allows 199 bytes per gid; the rest is epoch/subtask/n
_PREPARED = (
    "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() AND starts_with(gid, $1)"
)


@dataclass(frozen=True, slots=True)
class PostgresTransaction:
    """A transaction of one sink subtask: the writer that began it and its number there.

    ``writer`` is the gid up to and including the subtask (``lockgate/<job>/<uid>/<epoch>/
    <subtask>/``); the gid is ``writer`` followed by ``number``.
    """

    writer: str
    number: int

    @property
    def gid(self) -> str:
        """The id the transaction is prepared under."""
        return f"{self.writer}{self.number}"

    @property
    def epoch(self) -> str:
        """The epoch (attempt and run) of the writer that began it."""
        return self.writer.split("/")[3]


@dataclass
class _Epoch:
    """One attempt of one run of a sink, shared by the subtasks of that attempt."""

    prefix: str
    name: str
    attempt: int
    subtasks: set[int] = field(default_factory=set)
    restored: set[str] = field(default_factory=set)

    def admits(self, context: SinkContext) -> bool:
        """Whether the subtask of ``context`` belongs to this attempt of this run."""
        return context.attempt == self.attempt and context.subtask_index not in self.subtasks


class _Epochs:
    """Gives every subtask of an attempt the same new epoch, and another to the next attempt.

    The engine creates the writers of all subtasks of an attempt from the one sink object
    before it opens any. A run is new when a subtask index repeats for the same attempt
    number: the same sink runs the job again, whose attempts count from 0 again. Each epoch
    also collects the epochs of every transaction restored to any of its subtasks.
    """

    def __init__(self) -> None:
        self._latest: dict[tuple[str, str], _Epoch] = {}

    def join(self, context: SinkContext) -> _Epoch:
        """Return the epoch of the subtask of ``context``, noting what it restores."""
        key = (context.job_name, context.uid)
        epoch = self._latest.get(key)
        if epoch is None or not epoch.admits(context):
            name = f"{context.attempt}-{secrets.token_hex(6)}"
            epoch = self._latest[key] = _Epoch(_gid_prefix(context), name, context.attempt)
        epoch.subtasks.add(context.subtask_index)
        epoch.restored.update(txn.epoch for txn in _restored(context))
        return epoch


class _SubtaskTransactions(TwoPhaseCommitSink[T, PostgresTransaction]):
    """The prepared transactions of one subtask of a ``PostgresSink`` in exactly-once mode.

    ``data`` carries the open transaction: BEGIN, COPY batches, PREPARE TRANSACTION. A
    prepared transaction leaves its session, so the same connection then begins the next
    one. ``control`` commits and rolls back prepared ones, which cannot be done inside the
    open transaction. A transaction that got no rows is rolled back instead of prepared:
    committing it later finds no gid, which counts as committed, and so it is.
    """

    def __init__(self, dsn: str, rows: _RowEncoder[T], epoch: _Epoch) -> None:
        self._dsn = dsn
        self._rows = rows
        self._epoch = epoch
        self._writer = f"{epoch.prefix}{epoch.name}/{rows.context.subtask_index}/"
        self._numbers = itertools.count(1)
        self._open: PostgresTransaction | None = None
        self._written = 0
        self._unprepared: set[str] = set()
        self._data: _Connection | None = None
        self._control: _Connection | None = None

    @property
    def epoch(self) -> str:
        """The epoch of this attempt: the transactions it begins carry it."""
        return self._epoch.name

    async def connect(self) -> None:
        """Open both connections; subtask 0 then rolls back other epochs' strays."""
        self._control = await _connect(self._dsn)
        await _require_two_phase_commit(self._control, self._rows.where)
        self._data = await _connect(self._dsn)
        if self._rows.context.subtask_index == 0:
            await self.roll_back_strays(keep={self._epoch.name, *self._epoch.restored})

    async def disconnect(self) -> None:
        """Close both connections; the server rolls back a transaction left open."""
        for connection in (self._data, self._control):
            if connection is not None:
                await _close(connection)
        self._data = self._control = None

    async def roll_back_strays(self, *, keep: set[str]) -> None:
        """Roll back every prepared transaction of this job and uid whose epoch is not kept."""
        for gid in await self._prepared(self._epoch.prefix):
            if gid[len(self._epoch.prefix) :].split("/")[0] not in keep:
                await self._finish_prepared("ROLLBACK", gid)

    async def begin_transaction(self, context: SinkContext) -> PostgresTransaction:
        """BEGIN the subtask's next transaction."""
        await _connected(self._data).execute("BEGIN")
        self._open, self._written = PostgresTransaction(self._writer, next(self._numbers)), 0
        return self._open

    async def write(self, txn: PostgresTransaction, records: list[T]) -> None:
        """Encode ``records``; COPY each full batch into the open transaction."""
        self._rows.add(records)
        while batch := self._rows.take(everything=False):
            await self._copy(batch)

    async def pre_commit(self, txn: PostgresTransaction) -> None:
        """COPY what is buffered, then PREPARE TRANSACTION (or roll back an empty one)."""
        if batch := self._rows.take(everything=True):
            await self._copy(batch)
        if self._written:
            await _connected(self._data).execute(f"PREPARE TRANSACTION {_literal(txn.gid)}")
        else:
            await _connected(self._data).execute("ROLLBACK")
            self._unprepared.add(txn.gid)
        self._open = None

    async def commit(self, txn: PostgresTransaction) -> None:
        """COMMIT PREPARED; a gid no longer prepared was committed before."""
        if txn.gid in self._unprepared:
            self._unprepared.discard(txn.gid)
            return
        await self._finish_prepared("COMMIT", txn.gid)

    async def abort(self, txn: PostgresTransaction) -> None:
        """Roll back the open transaction, or a prepared one."""
        if txn == self._open:
            self._open = None
            await _roll_back_open(_connected(self._data))
        else:
            await self._finish_prepared("ROLLBACK", txn.gid)

    async def recover_and_abort(self, txn: PostgresTransaction) -> None:
        """Roll back ``txn`` and every later one its writer prepared.

        ``txn`` was open when the restored checkpoint was taken; what its writer prepared
        from then on belongs to checkpoints that did not complete (or that the restore
        discards), so none of it may ever commit.
        """
        for gid in await self._prepared(txn.writer):
            number = gid[len(txn.writer) :]
            if number.isdigit() and int(number) >= txn.number:
                await self._finish_prepared("ROLLBACK", gid)

    async def _copy(self, batch: list[Row]) -> None:
        table = self._rows.table
        await _connected(self._data).copy_records_to_table(
            table.name, records=batch, columns=list(table.columns), schema_name=table.schema
        )
        self._written += len(batch)

    async def _prepared(self, prefix: str) -> list[str]:
        records = await _connected(self._control).fetch(_PREPARED, prefix)
        return [str(record["gid"]) for record in records]

    async def _finish_prepared(self, verb: Literal["COMMIT", "ROLLBACK"], gid: str) -> None:
        # A gid no longer prepared was finished before: gids are never reused.
        with contextlib.suppress(asyncpg.exceptions.UndefinedObjectError):
            await _connected(self._control).execute(f"{verb} PREPARED {_literal(gid)}")


class _PreparedWriter(TwoPhaseCommitWriter[T, PostgresTransaction]):
    """The engine's two-phase-commit writer, around the connections of one subtask."""

    def __init__(self, transactions: _SubtaskTransactions[T], context: SinkContext) -> None:
        super().__init__(transactions, context)
        self._transactions = transactions
        self._sweep_due = context.subtask_index == 0

    async def open(self) -> None:
        """Connect (subtask 0 rolls back strays), then recover the restored transactions."""
        await self._transactions.connect()
        await super().open()

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Commit; after the attempt's first completed checkpoint, sweep other epochs once.

        Every subtask has recovered by then, so a prepared transaction of another epoch is
        a stray, whatever the restored state said.
        """
        await super().notify_checkpoint_complete(checkpoint_id)
        if self._sweep_due:
            self._sweep_due = False
            await self._transactions.roll_back_strays(keep={self._transactions.epoch})

    async def close(self) -> None:
        """Roll back the open transaction, then close the connections."""
        try:
            await super().close()
        finally:
            await self._transactions.disconnect()


async def _require_two_phase_commit(connection: _Connection, where: str) -> None:
    allowed = int(await connection.fetchval("SHOW max_prepared_transactions"))
    if allowed == 0:
        raise ConnectorError(
            f"{where} needs prepared transactions, but the server has "
            "max_prepared_transactions = 0; set it above the sink's parallelism and restart "
            "PostgreSQL, or use mode='upsert'"
        )


def _restored(context: SinkContext) -> list[PostgresTransaction]:
    log: TransactionLog[Any] = TransactionLog.from_state(context.restored_state)
    restored = [txn for _, txn in log.pending] + list(log.lingering)
    foreign = [txn for txn in restored if not isinstance(txn, PostgresTransaction)]
    if foreign:
        raise ConnectorError(
            f"postgres sink '{context.uid}' restored transactions of another sink "
            f"({foreign[0]!r}); restore from a checkpoint of this job, or give the sink a new uid"
        )
    return restored


def _gid_prefix(context: SinkContext) -> str:
    prefix = f"lockgate/{quote(context.job_name, safe='')}/{quote(context.uid, safe='')}/"
    if len(prefix.encode()) > _MAX_PREFIX_BYTES:
        raise ConnectorError(
            f"postgres sink '{context.uid}' of job '{context.job_name}' would prepare "
            f"transactions under '{prefix}', {len(prefix.encode())} bytes; PostgreSQL allows "
            f"{_MAX_PREFIX_BYTES} here; shorten the job name or the sink's uid"
        )
    return prefix


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
