"""CollectSink: a transactional in-memory sink for tests, examples and embedding."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from lockgate.engine import TypeCodec
from lockgate.engine.io.sinks import SinkContext, TwoPhaseCommitSink

__all__ = ["CollectSink", "CollectTransaction"]

T = TypeVar("T")


@dataclass
class CollectTransaction(Generic[T]):
    """The records one subtask wrote between two checkpoints, under a fenced id."""

    transaction_id: str
    records: list[T] = field(default_factory=list)


class CollectSink(TwoPhaseCommitSink[T, CollectTransaction[T]]):
    """Keeps in ``results`` the records that completed checkpoints committed.

    Exactly-once: records become visible only when the checkpoint after them completes (for
    a bounded job, at the latest with its final checkpoint), in commit order, each subtask's
    records in the order it wrote them. A commit is idempotent, so a transaction recovered
    from a checkpoint after a restart is never added twice. The sink object is the "external
    system": keep using the same object across restarts and restores to see one history.
    """

    def __init__(self) -> None:
        self._results: list[T] = []
        self._committed: set[str] = set()
        self._counter = itertools.count()

    @property
    def results(self) -> list[T]:
        """The records of committed transactions, in commit order."""
        return self._results

    def state_types(self) -> Sequence[TypeCodec]:
        """Savepoints store transactions as their id and records."""
        return (TypeCodec.for_dataclass(CollectTransaction, "lockgate.CollectTransaction"),)

    def clear(self) -> None:
        """Forget every committed record."""
        self._results.clear()

    async def begin_transaction(self, context: SinkContext) -> CollectTransaction[T]:
        """Open a transaction fenced by job, run, attempt, subtask and a counter."""
        fence = f"{context.job_name}/{context.run_id}/{context.attempt}/{context.subtask_index}"
        return CollectTransaction(f"{fence}/{next(self._counter)}")

    async def write(self, txn: CollectTransaction[T], records: list[T]) -> None:
        """Buffer records in the transaction."""
        txn.records.extend(records)

    async def pre_commit(self, txn: CollectTransaction[T]) -> None:
        """Nothing to flush: the records are in the transaction."""

    async def commit(self, txn: CollectTransaction[T]) -> None:
        """Make the transaction's records visible, once."""
        if txn.transaction_id not in self._committed:
            self._committed.add(txn.transaction_id)
            self._results.extend(txn.records)

    async def abort(self, txn: CollectTransaction[T]) -> None:
        """Drop the transaction's records."""
        txn.records.clear()

    def __repr__(self) -> str:
        return f"<CollectSink results={len(self._results)}>"
