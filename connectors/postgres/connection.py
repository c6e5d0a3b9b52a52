"""The asyncpg connection of a PostgresSink writer (the ``postgres`` extra)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, cast

try:
    import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type hints
except ImportError as error:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "PostgresSink needs asyncpg; install the extra: pip install 'lockgate[postgres]'"
    ) from error

__all__ = ["asyncpg"]


class _Connection(Protocol):
    """The part of ``asyncpg.Connection`` the PostgresSink writers use."""

    async def execute(self, query: str, *args: object) -> str: ...

    async def executemany(self, command: str, args: Iterable[Sequence[object]]) -> None: ...

    async def fetch(self, query: str, *args: object) -> list[Any]: ...

    async def fetchval(self, query: str, *args: object) -> Any: ...

    async def copy_records_to_table(
        self,
        table_name: str,
        *,
        records: Iterable[Sequence[object]],
        columns: list[str],
        schema_name: str | None,
    ) -> str: ...

    def transaction(self) -> Any: ...

    def is_closed(self) -> bool: ...

    async def close(self) -> None: ...

    def terminate(self) -> None: ...


async def _connect(dsn: str) -> _Connection:
    return cast(_Connection, await asyncpg.connect(dsn))


def _connected(connection: _Connection | None) -> _Connection:
    if connection is None:
        raise RuntimeError("postgres sink writer is not connected; call open() before writing")
    return connection


async def _close(connection: _Connection) -> None:
    try:
        await connection.close()
    except (asyncpg.InterfaceError, asyncpg.PostgresError, OSError):
        connection.terminate()  # busy or broken: dropping the session rolls back its work


async def _roll_back_open(connection: _Connection) -> None:
    try:
        await connection.execute("ROLLBACK")
    except (asyncpg.InterfaceError, asyncpg.PostgresError, OSError):
        connection.terminate()  # busy or broken: dropping the session rolls back its work
