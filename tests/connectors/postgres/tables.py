"""Test tables for the PostgreSQL sink: each test gets its own, dropped afterwards together
with any transaction its job left prepared."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any


async def prepared(db: Any, job: str) -> list[str]:
    """The ids of the transactions a job named ``job`` left prepared."""
    rows = await db.fetch(
        "SELECT gid FROM pg_prepared_xacts WHERE starts_with(gid, $1)", f"lockgate/{job}/"
    )
    return [row["gid"] for row in rows]


@asynccontextmanager
async def new_table(db: Any, prefix: str, columns: str) -> AsyncIterator[str]:
    """A new table, also the job's name; its prepared transactions go with it."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    await db.execute(f"CREATE TABLE {name} ({columns})")
    try:
        yield name
    finally:
        for gid in await prepared(db, name):
            await db.execute(f"ROLLBACK PREPARED '{gid}'")
        await db.execute(f"DROP TABLE {name}")
