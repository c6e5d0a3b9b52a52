"""Fixtures of the connector tests that talk to PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.connectors.postgres.tables import new_table


@pytest.fixture
async def db(postgres_dsn: str) -> AsyncIterator[Any]:
    """A connection to the test server, for setting up and checking tables."""
    import asyncpg  # type: ignore[import-untyped]  # extra 'postgres'

    connection = await asyncpg.connect(postgres_dsn)
    yield connection
    await connection.close()


@pytest.fixture
async def table(db: Any) -> AsyncIterator[str]:
    """A new table of numbers, also the job's name."""
    async with new_table(db, "pg_numbers", "value bigint") as name:
        yield name


@pytest.fixture
async def keyed_table(db: Any) -> AsyncIterator[str]:
    """A new table keyed by ``value``, also the job's name."""
    async with new_table(db, "pg_keyed", "value bigint PRIMARY KEY, label text") as name:
        yield name
