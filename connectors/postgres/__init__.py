"""PostgreSQL sink: exactly-once by two-phase commit, or effectively-once upserts.

Needs the ``postgres`` extra (``pip install 'lockgate[postgres]'``), which brings asyncpg.
"""

from lockgate.connectors.postgres.sink import PostgresSink

__all__ = ["PostgresSink"]
