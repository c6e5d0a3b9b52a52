"""PostgresSink: a job's records into a PostgreSQL table, exactly-once or by idempotent upsert.

Guarantees:

- ``mode="exactly_once"`` (default): **exactly-once**. Each subtask writes into a database
  transaction, prepares it (``PREPARE TRANSACTION``) at the checkpoint barrier and commits it
  (``COMMIT PREPARED``) when the checkpoint completes, so a row becomes visible once, and only
  once the checkpoint that covers it is durable.
- ``mode="upsert"``: **effectively-once**: at-least-once delivery made idempotent by
  ``INSERT ... ON CONFLICT (key_columns) DO UPDATE``. Each batch commits at once; a replay
  after a restart writes the same rows again, which overwrites them instead of adding any.

Transaction ids and recovery in exactly-once mode: see ``postgres_transactions``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from lockgate.connectors.postgres.table import PostgresSinkMode, Row, _RowEncoder, _Table
from lockgate.connectors.postgres.transactions import (
    PostgresTransaction,
    _Epochs,
    _PreparedWriter,
    _SubtaskTransactions,
)
from lockgate.connectors.postgres.upsert import _UpsertWriter
from lockgate.engine import TypeCodec
from lockgate.engine.io.asyncio_only import require_asyncio
from lockgate.engine.io.sinks import Sink, SinkContext, SinkWriter

__all__ = ["PostgresSink", "PostgresSinkMode", "PostgresTransaction"]

T = TypeVar("T")


class PostgresSink(Sink[T]):
    """Writes records as rows of a PostgreSQL table, exactly-once or by idempotent upsert.

    ``to_row(record)`` returns one value per column (default: ``tuple(record)``); rows are
    written ``batch_size`` at a time (COPY in exactly-once mode, ``executemany`` in upsert
    mode). ``table`` is ``"name"`` or ``"schema.name"``, unquoted.

    Exactly-once (the default): rows become visible only when the checkpoint after them
    completes (a bounded job's final checkpoint commits the last ones), each once, also
    across failures, restarts and restores; see ``postgres_transactions`` for the transaction
    ids and the recovery. Each subtask holds two connections: one carries its open transaction,
    the other commits and rolls back prepared ones (``COMMIT PREPARED`` cannot run inside a
    transaction). The server must allow prepared transactions: ``max_prepared_transactions``
    at least the sink's parallelism times (concurrent checkpoints + 1).

    Upsert (``mode="upsert"``, ``key_columns`` naming a unique key of the table): every
    batch commits at once, and a checkpoint waits until everything before it committed, so
    no row is lost; rows written after the last completed checkpoint are written again after
    a restart, and ``ON CONFLICT DO UPDATE`` makes that rewrite harmless. The table ends up
    as if each record were written once if ``to_row`` is deterministic; until the replay
    catches up, readers may see rows newer than the restored checkpoint.
    """

    def __init__(
        self,
        dsn: str,
        *,
        table: str,
        columns: Sequence[str],
        to_row: Callable[[T], Sequence[Any]] | None = None,
        mode: PostgresSinkMode = "exactly_once",
        key_columns: Sequence[str] = (),
        batch_size: int = 1000,
    ) -> None:
        if mode not in ("exactly_once", "upsert"):
            raise ValueError(f"PostgresSink mode must be 'exactly_once' or 'upsert'; got {mode!r}")
        self._dsn = dsn
        self._mode = mode
        self._table = _Table.build(table, columns, key_columns, mode, batch_size)
        self._to_row: Callable[[T], Sequence[Any]] = to_row or _as_tuple
        self._epochs = _Epochs()

    @property
    def mode(self) -> PostgresSinkMode:
        """How rows are written: ``"exactly_once"`` or ``"upsert"``."""
        return self._mode

    def state_types(self) -> Sequence[TypeCodec]:
        """Savepoints store exactly-once transactions as their writer prefix and number.

        Upsert writers store nothing; the type is declared in either mode, which costs
        nothing and keeps a job's savepoint codec the same whatever the mode.
        """
        return (TypeCodec.for_dataclass(PostgresTransaction, "lockgate.PostgresTransaction"),)

    def create_writer(self, context: SinkContext) -> SinkWriter[T]:
        """Return the writer of one subtask for this sink's mode.

        Raises:
            AsyncioRequired: the job runs on trio; asyncpg needs asyncio.
        """
        require_asyncio("PostgreSQL sink", "asyncpg", context=context)
        rows = _RowEncoder(self._to_row, self._table, context)
        if self._mode == "upsert":
            return _UpsertWriter(self._dsn, self._table, rows)
        transactions = _SubtaskTransactions(self._dsn, rows, self._epochs.join(context))
        return _PreparedWriter(transactions, context)

    def __repr__(self) -> str:
        return f"<PostgresSink {self._table.qualified} mode={self._mode!r}>"


def _as_tuple(record: Any) -> Row:
    return tuple(record)
