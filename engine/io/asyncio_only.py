"""require_asyncio: how a part whose client library runs on asyncio only refuses other loops.

The engine runs on any anyio backend; the clients of Kafka (aiokafka), Redis
(``redis.asyncio``), PostgreSQL (asyncpg) and S3 (aiobotocore) need asyncio's loop. Their
connectors call ``require_asyncio`` where a job deploys them, so a job on trio fails before
any record flows, with an error naming the connector, instead of deep inside the library.
"""

from __future__ import annotations

import sys

from lockgate.engine.errors import AsyncioRequired
from lockgate.engine.io.sinks import SinkContext
from lockgate.engine.io.sources import SourceContext

__all__ = ["require_asyncio"]


def require_asyncio(
    what: str, library: str, *, context: SourceContext | SinkContext | None = None
) -> None:
    """Raise ``AsyncioRequired`` if this thread runs an event loop that is not asyncio's.

    ``what`` names the part (``"Kafka source"``); with ``context`` the message adds the
    operator uid and subtask. Outside any event loop nothing is raised: the check belongs
    where the part starts, inside the job's loop.
    """
    if _on_trio():
        where = "" if context is None else f" '{context.uid}' {_subtask(context)}"
        raise AsyncioRequired(
            f"{what}{where} needs asyncio: {library} runs on asyncio only, and this job runs "
            "on trio; run it on asyncio (lockgate.engine.run, or anyio.run(..., "
            "backend='asyncio')), or use parts that run on any loop: CollectionSource, "
            "FileSource, FileSink, CollectSink, file:// or memory:// checkpoint storage"
        )


def _subtask(context: SourceContext | SinkContext) -> str:
    return f"(subtask {context.subtask_index + 1}/{context.parallelism})"


def _on_trio() -> bool:
    # Never imported here: a running trio loop has imported trio already.
    trio = sys.modules.get("trio")
    return trio is not None and bool(trio.lowlevel.in_trio_run())
