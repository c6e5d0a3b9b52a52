"""Where a PostgresSink's rows go: the table, its statements, and the row encoder."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias, TypeVar

from lockgate.connectors.errors import UnencodableRecord
from lockgate.engine.io.sinks import SinkContext

__all__ = ["PostgresSinkMode", "Row"]

T = TypeVar("T")
PostgresSinkMode: TypeAlias = Literal["exactly_once", "upsert"]
Row: TypeAlias = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _Table:
    """Where rows go, and the statements that put them there."""

    schema: str | None
    name: str
    columns: tuple[str, ...]
    key_columns: tuple[str, ...]
    batch_size: int

    @classmethod
    def build(
        cls,
        table: str,
        columns: Sequence[str],
        key_columns: Sequence[str],
        mode: PostgresSinkMode,
        batch_size: int,
    ) -> _Table:
        _check_columns(list(columns), list(key_columns), mode)
        if batch_size < 1:
            raise ValueError(f"PostgresSink batch_size must be at least 1; got {batch_size}")
        schema, _, name = table.rpartition(".")
        return cls(schema or None, name, tuple(columns), tuple(key_columns), batch_size)

    @property
    def qualified(self) -> str:
        """The table's name as SQL, quoted."""
        parts = [self.schema, self.name] if self.schema else [self.name]
        return ".".join(_identifier(part) for part in parts)

    def upsert_statement(self) -> str:
        """Return ``INSERT ... ON CONFLICT (keys) DO UPDATE`` for one row."""
        names = ", ".join(_identifier(column) for column in self.columns)
        values = ", ".join(f"${index}" for index in range(1, len(self.columns) + 1))
        keys = ", ".join(_identifier(column) for column in self.key_columns)
        updates = [_identifier(c) for c in self.columns if c not in self.key_columns]
        action = (
            "UPDATE SET " + ", ".join(f"{column} = EXCLUDED.{column}" for column in updates)
            if updates
            else "NOTHING"
        )
        insert = f"INSERT INTO {self.qualified} ({names}) VALUES ({values})"
        return f"{insert} ON CONFLICT ({keys}) DO {action}"


def _check_columns(columns: list[str], key_columns: list[str], mode: PostgresSinkMode) -> None:
    if not columns:
        raise ValueError("PostgresSink needs the table's columns to write; got columns=[]")
    if mode == "upsert" and not key_columns:
        raise ValueError(
            "PostgresSink mode='upsert' needs key_columns, a unique key of the table for "
            "ON CONFLICT, e.g. key_columns=['id']"
        )
    if mode == "exactly_once" and key_columns:
        raise ValueError(
            "PostgresSink key_columns apply to mode='upsert' only; drop them, or choose upsert"
        )
    missing = [column for column in key_columns if column not in columns]
    if missing:
        raise ValueError(f"PostgresSink key columns {missing} are not among columns {columns}")


@dataclass(slots=True)
class _RowEncoder(Generic[T]):
    """Turns one subtask's records into rows, one value per column, and buffers them."""

    to_row: Callable[[T], Sequence[Any]]
    table: _Table
    context: SinkContext
    pending: list[Row] = field(default_factory=list)

    def add(self, records: Iterable[T]) -> None:
        """Encode ``records`` and buffer them; raise ``UnencodableRecord`` for a wrong width."""
        for record in records:
            self.pending.append(self._row(record))

    def take(self, *, everything: bool) -> list[Row]:
        """Remove and return a full batch, or everything buffered; ``[]`` when there is none."""
        size = len(self.pending) if everything else self.table.batch_size
        if len(self.pending) < max(size, 1):
            return []
        batch = self.pending[:size]
        del self.pending[:size]
        return batch

    @property
    def where(self) -> str:
        """The sink and subtask, for messages."""
        context = self.context
        return (
            f"postgres sink '{context.uid}' (subtask {context.subtask_index + 1}/"
            f"{context.parallelism})"
        )

    def _row(self, record: T) -> Row:
        row = tuple(self.to_row(record))
        if len(row) != len(self.table.columns):
            raise UnencodableRecord(
                f"{self.where} got a row of {len(row)} values for columns "
                f"{list(self.table.columns)}: {row!r}; make to_row return one value per column"
            )
        return row


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
