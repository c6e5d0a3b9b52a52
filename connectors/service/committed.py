"""CommittedSink: exactly-once output that code in the same process subscribes to."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from lockgate.connectors.service.subscription import Overflow, Subscriber, Subscription
from lockgate.connectors.service.wakeup import wait_any
from lockgate.engine import TypeCodec
from lockgate.engine.io.driver_side import DriverSide, on_driver
from lockgate.engine.io.sinks import SinkContext, TwoPhaseCommitSink

__all__ = ["CommittedSink", "CommittedStatistics", "CommittedTransaction"]

T = TypeVar("T")


@dataclass
class CommittedTransaction(Generic[T]):
    """The records one subtask wrote between two checkpoints, under a fenced id."""

    transaction_id: str
    records: list[T] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CommittedStatistics:
    """A committed sink now: records and transactions committed, subscribers and history."""

    committed: int
    transactions: int
    subscribers: int
    history: int


class CommittedSink(TwoPhaseCommitSink[T, CommittedTransaction[T]], DriverSide):
    """Exactly-once output for code in the same process: ``async for r in sink.subscribe()``.

    A two-phase-commit sink: each subtask writes into a transaction, pre-committed at the
    checkpoint barrier and committed when that checkpoint completes. Subscribers see a
    transaction's records only then, in commit order (one order for every subscriber), each
    record once, also across failures, restarts and restores: a commit is idempotent, so a
    transaction recovered from a checkpoint is never published twice.

    A subscription yields the records committed after it started, or, with
    ``from_beginning=True``, first the latest ``history`` records this process committed
    (all of them with ``history=None``). Each subscription has a bounded ``buffer``; when it
    is full a commit waits for it (``on_overflow="backpressure"``, the default: a slow
    subscriber slows the job down) or the subscription is dropped and raises
    ``SubscriberTooSlow`` after its buffered records (``on_overflow="drop"``). The sink
    object is the "external system": keep using it across restarts and restores, and
    subscriptions go on. ``CollectSink`` remains the sink for tests that read ``results``.
    Under every executor, commits happen on this object, in the process that started the job
    (``DriverSide``): subscribers there see what subtasks in worker processes committed.
    """

    driver_only = ("_history", "_subscribers", "_ids", "_committed")

    def __init__(self, *, history: int | None = 10_000) -> None:
        if history is not None and history < 0:
            raise ValueError(f"history must be at least 0 or None; got {history}")
        self._history: deque[T] = deque(maxlen=history)
        self._subscribers: list[Subscriber[T]] = []
        self._ids: set[str] = set()
        self._committed = 0
        self._counter = itertools.count()
        self._uid: str | None = None

    def subscribe(
        self,
        *,
        from_beginning: bool = False,
        on_overflow: Overflow = "backpressure",
        buffer: int = 1024,
    ) -> Subscription[T]:
        """Return a subscription to the records committed from now on (or from the history).

        It starts at once, so no commit falls between this call and the first iteration.
        """
        if buffer < 1:
            raise ValueError(f"buffer must be at least 1; got {buffer}")
        if on_overflow not in ("backpressure", "drop"):
            raise ValueError(f"on_overflow must be 'backpressure' or 'drop'; got {on_overflow!r}")
        history = list(self._history) if from_beginning else []
        subscriber = Subscriber(buffer=buffer, overflow=on_overflow, history=history)
        self._subscribers.append(subscriber)
        return Subscription(subscriber, self._forget)

    def statistics(self) -> CommittedStatistics:
        """What the sink committed, and who reads it."""
        return CommittedStatistics(
            committed=self._committed,
            transactions=len(self._ids),
            subscribers=len(self._subscribers),
            history=len(self._history),
        )

    def state_types(self) -> Sequence[TypeCodec]:
        """Savepoints store transactions as their id and records."""
        return (TypeCodec.for_dataclass(CommittedTransaction, "lockgate.CommittedTransaction"),)

    async def begin_transaction(self, context: SinkContext) -> CommittedTransaction[T]:
        """Open a transaction fenced by job, run, attempt, subtask and a counter."""
        self._uid = context.uid
        fence = f"{context.job_name}/{context.run_id}/{context.attempt}/{context.subtask_index}"
        return CommittedTransaction(f"{fence}/{next(self._counter)}")

    async def write(self, txn: CommittedTransaction[T], records: list[T]) -> None:
        """Buffer records in the transaction."""
        txn.records.extend(records)

    async def pre_commit(self, txn: CommittedTransaction[T]) -> None:
        """Nothing to flush: the records are in the transaction."""

    @on_driver
    async def commit(self, txn: CommittedTransaction[T]) -> None:
        """Publish the transaction's records to every subscriber, once.

        Waits while a backpressuring subscriber's buffer has no room for them.
        """
        records = txn.records
        while (full := self._full_for(len(records))) and txn.transaction_id not in self._ids:
            await wait_any(subscriber.taken for subscriber in full)
        if txn.transaction_id in self._ids:
            return
        self._ids.add(txn.transaction_id)
        self._committed += len(records)
        self._history.extend(records)
        describe = "committed sink" if self._uid is None else f"committed sink '{self._uid}'"
        for subscriber in list(self._subscribers):
            subscriber.offer(records, describe=describe)
            if subscriber.dropped is not None:
                self._subscribers.remove(subscriber)

    async def abort(self, txn: CommittedTransaction[T]) -> None:
        """Drop the transaction's records."""
        txn.records.clear()

    def _full_for(self, count: int) -> list[Subscriber[T]]:
        # The backpressuring subscribers that have no room for count more records.
        if not count:
            return []
        return [s for s in self._subscribers if s.backpressures and not s.has_room(count)]

    def _forget(self, subscriber: Subscriber[T]) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)
        subscriber.leave()

    def __repr__(self) -> str:
        subscribers = len(self._subscribers)
        return f"<CommittedSink committed={self._committed} subscribers={subscribers}>"
