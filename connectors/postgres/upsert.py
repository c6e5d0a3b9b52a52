"""PostgresSink's upsert writer: effectively-once, each batch committed at once."""

from __future__ import annotations

from typing import Any, TypeVar

from lockgate.connectors.postgres.connection import _close, _connect, _connected, _Connection
from lockgate.connectors.postgres.table import Row, _RowEncoder, _Table
from lockgate.engine.io.sinks import SinkWriter

__all__: list[str] = []

T = TypeVar("T")


class _UpsertWriter(SinkWriter[T]):
    """Upserts each full batch in its own transaction; a checkpoint first upserts the rest."""

    def __init__(self, dsn: str, table: _Table, rows: _RowEncoder[T]) -> None:
        self._dsn = dsn
        self._statement = table.upsert_statement()
        self._rows = rows
        self._connection: _Connection | None = None

    async def open(self) -> None:
        """Connect."""
        self._connection = await _connect(self._dsn)

    async def write(self, records: list[T]) -> None:
        """Encode ``records``; upsert and commit each full batch."""
        self._rows.add(records)
        while batch := self._rows.take(everything=False):
            await self._upsert(batch)

    async def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        """Upsert what is buffered: everything before the barrier is committed."""
        await self.finish()
        return []

    async def finish(self) -> None:
        """Upsert what is buffered."""
        if batch := self._rows.take(everything=True):
            await self._upsert(batch)

    async def close(self) -> None:
        """Close the connection; rows still buffered are replayed after a restart."""
        if self._connection is not None:
            await _close(self._connection)
            self._connection = None

    async def _upsert(self, batch: list[Row]) -> None:
        connection = _connected(self._connection)
        async with connection.transaction():
            await connection.executemany(self._statement, batch)
