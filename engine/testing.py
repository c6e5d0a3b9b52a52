"""Test doubles for lockgate jobs, shipped for users' own tests as Flink ships its harnesses.

- ``FailOnce``: a failure sentinel that fires exactly once across attempts, from a
  ``CollectionSource``'s elements or from a user function (``fail.maybe_fire()``).
- ``AwaitCheckpoint``: a sentinel at which a ``CollectionSource``'s reader waits until a
  checkpoint completes, so a failure placed after it comes after a completed checkpoint.
- ``RecordingTwoPhaseCommitSink``: a two-phase-commit sink that records every call and shows
  exactly which records committed, so exactly-once can be asserted as exact lists.
- ``ManualClock``: a clock that moves only when the test advances it.
- ``LoopLagMonitor``: a task that measures how late the event loop wakes its 1 ms sleeps,
  so a test can show that a job never stalls the service it runs in (``LoopLag``: p99, max).
- ``RecordingWatermarkOutput``: a ``WatermarkOutput`` that records what a watermark
  generator emits, to test a generator without a job.

Exactly-once is tested as Flink does: inject a failure once, after at least one completed
checkpoint, assert ``fail.fired`` (so a test cannot pass without failing), and compare the
committed records with the exact expected list.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from lockgate.engine.events import Watermark
from lockgate.engine.io.driver_side import DriverSide
from lockgate.engine.io.record_chunks import pickled_in_chunks, unpickled_chunks
from lockgate.engine.io.sinks import SinkContext, TwoPhaseCommitSink
from lockgate.engine.io.transactions import TransactionStatus
from lockgate.engine.time.clock import ManualClock
from lockgate.engine.time.loop_lag import LoopLag, LoopLagMonitor

__all__ = [
    "AwaitCheckpoint",
    "FailOnce",
    "InjectedFailure",
    "LoopLag",
    "LoopLagMonitor",
    "ManualClock",
    "RecordingTransaction",
    "RecordingTwoPhaseCommitSink",
    "RecordingWatermarkOutput",
    "TransactionChanged",
    "TransactionEvent",
]

T = TypeVar("T")

OPEN, PRE_COMMITTED = TransactionStatus.OPEN, TransactionStatus.PRE_COMMITTED
COMMITTED, ABORTED = TransactionStatus.COMMITTED, TransactionStatus.ABORTED


class RecordingWatermarkOutput:
    """A ``WatermarkOutput`` that keeps what a generator emits, in order.

    ``watermarks`` holds every watermark emitted; ``idle`` is whether the output is idle
    now (emitting marks it active again, as in Flink); ``current`` is the highest watermark
    emitted, ``-inf`` before the first.
    """

    def __init__(self) -> None:
        self.watermarks: list[Watermark] = []
        self.idle = False

    @property
    def current(self) -> float:
        """The highest watermark emitted so far."""
        return max((w.timestamp for w in self.watermarks), default=-math.inf)

    def emit_watermark(self, watermark: Watermark) -> None:
        """Record ``watermark``; the output is active."""
        self.watermarks.append(watermark)
        self.idle = False

    def mark_idle(self) -> None:
        """The output is idle."""
        self.idle = True

    def mark_active(self) -> None:
        """The output is active."""
        self.idle = False

    def __repr__(self) -> str:
        return f"<RecordingWatermarkOutput current={self.current} idle={self.idle}>"


class InjectedFailure(Exception):
    """A failure a test injected on purpose with ``FailOnce``; nothing is actually broken."""


class _Sentinel:
    """What the source sentinels share: the process notes that one was ever made.

    ``__new__`` runs for every instance, also one unpickled or copied, so while
    ``sentinels_made()`` is false no collection in the process can hold a sentinel, and a
    ``CollectionSource`` need not scan its elements for one.
    """

    made = False

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        _Sentinel.made = True
        return super().__new__(cls)


def sentinels_made() -> bool:
    """Whether this process ever made a ``FailOnce`` or an ``AwaitCheckpoint``."""
    return _Sentinel.made


class AwaitCheckpoint(_Sentinel, DriverSide):
    """A sentinel at which a ``CollectionSource`` reader waits for a completed checkpoint.

    The reader returns the records before it, then waits until a checkpoint completes after
    it got there, then reads on; once passed, replays skip it. Placed before a ``FailOnce``,
    it guarantees the failure comes after at least one completed checkpoint and at least one
    record after it, however fast the job runs. Shared, like ``FailOnce``, by every copy, also
    in worker processes: the one in the driving process learns that it was passed.
    """

    def __init__(self) -> None:
        self._passed = False

    @property
    def passed(self) -> bool:
        """Whether a reader got past it (after a completed checkpoint)."""
        return self._passed

    @passed.setter
    def passed(self, passed: bool) -> None:
        self._passed = passed
        if passed:
            self.tell_driver("_pass")

    def _pass(self) -> None:
        self._passed = True

    def __repr__(self) -> str:
        return f"<AwaitCheckpoint passed={self.passed}>"


class FailOnce(_Sentinel, DriverSide):
    """A failure that fires exactly once, however often a job replays past it.

    Put it among a ``CollectionSource``'s elements (the reader raises ``InjectedFailure``
    when it reaches it, and skips it once fired), or call ``maybe_fire()`` from a user
    function. The flag lives in this object, shared by every attempt of a job in the
    process: the first call raises, every later one does nothing. Assert ``fired`` at the
    end of a test, so that a failure that never happened cannot pass unnoticed.

    In worker processes (``ProcessExecutor``) the flag is the one of this object, in the
    driving process: the first call in any worker fires it (asking the driving process), and
    no later call, in any worker of any attempt, fires it again.
    """

    def __init__(self, name: str = "injected failure") -> None:
        self._name = name
        self._fired = False

    @property
    def name(self) -> str:
        """What the failure is called in its error message."""
        return self._name

    @property
    def fired(self) -> bool:
        """Whether the failure has fired."""
        return self._fired

    def maybe_fire(self) -> None:
        """Raise ``InjectedFailure`` the first time; do nothing after.

        Raises:
            InjectedFailure: on the first call only.
        """
        if self._fired:
            return
        first = self.call_on_driver("_fire")
        self._fired = True
        if first:
            raise InjectedFailure(f"{self._name} (FailOnce fires once; it will not fire again)")

    def _fire(self) -> bool:
        # Runs on the object in the driving process: whether this call is the one that fires.
        first, self._fired = not self._fired, True
        return first

    def __repr__(self) -> str:
        return f"<FailOnce {self._name!r} fired={self._fired}>"


@dataclass(slots=True)
class RecordingTransaction(Generic[T]):
    """A transaction of ``RecordingTwoPhaseCommitSink``: plain data, its records inside.

    ``transaction_id`` is ``"<job>/<run>/<attempt>/<subtask>/<n>"``: attempts and subtasks never
    share an id. It pickles its records in chunks, as a transaction holding records should.
    """

    transaction_id: str
    records: list[T] = field(default_factory=list)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_recording_transaction, (self.transaction_id, pickled_in_chunks(self.records)))


def _recording_transaction(
    transaction_id: str, chunks: tuple[bytes, ...]
) -> RecordingTransaction[Any]:
    return RecordingTransaction(transaction_id, unpickled_chunks(chunks))


class TransactionChanged(RuntimeError):
    """A transaction changed after its pre-commit, which ``TwoPhaseCommitSink`` forbids."""


@dataclass(frozen=True, slots=True)
class TransactionEvent(Generic[T]):
    """One call a ``RecordingTwoPhaseCommitSink`` received.

    ``method`` is the sink method's name, ``transaction_id`` the transaction it was given,
    and ``records`` what a ``write`` wrote (empty for every other method).
    """

    method: str
    transaction_id: str
    records: tuple[T, ...] = ()


class RecordingTwoPhaseCommitSink(TwoPhaseCommitSink[T, RecordingTransaction[T]]):
    """A two-phase-commit sink that keeps committed records in memory and logs every call.

    ``committed`` holds the records of committed transactions, in commit order; records of
    open, pre-committed or aborted transactions never appear there. Commit and abort are
    idempotent (a second call is logged and changes nothing). Every transaction's status
    follows ``TransactionStatus``: a writer that commits an aborted transaction, aborts a
    committed one or writes to a pre-committed one raises, so the double also checks the
    protocol. A pre-committed transaction is immutable: when the sink is handed one again
    (to commit, abort or recover it) whose id or records changed since its pre-commit, it
    raises ``TransactionChanged``. The sink may be shared by all subtasks and all attempts of
    a job.
    """

    def __init__(self) -> None:
        self._committed: list[T] = []
        self._events: list[TransactionEvent[T]] = []
        self._statuses: dict[str, TransactionStatus] = {}
        self._commit_order: list[str] = []
        self._counters: collections.Counter[tuple[str, str, int, int]] = collections.Counter()
        # What each pre-commit saw, by id() of the transaction, which the entry keeps alive.
        self._sealed: dict[int, tuple[RecordingTransaction[T], str, tuple[T, ...]]] = {}

    @property
    def committed(self) -> list[T]:
        """The records of committed transactions, in commit order."""
        return list(self._committed)

    @property
    def events(self) -> list[TransactionEvent[T]]:
        """Every call received, in order."""
        return list(self._events)

    @property
    def open_transactions(self) -> list[str]:
        """Ids of transactions begun and not yet ended: open or pre-committed."""
        return [tid for tid, status in self._statuses.items() if not status.is_terminal]

    @property
    def pre_committed(self) -> list[str]:
        """Ids of pre-committed transactions still waiting for their checkpoint."""
        return self._with_status(PRE_COMMITTED)

    @property
    def committed_transactions(self) -> list[str]:
        """Ids of committed transactions, in commit order."""
        return list(self._commit_order)

    @property
    def aborted(self) -> list[str]:
        """Ids of aborted transactions."""
        return self._with_status(ABORTED)

    def status(self, transaction_id: str) -> TransactionStatus:
        """Return the status of a transaction this sink has seen.

        Raises:
            KeyError: the sink never saw ``transaction_id``.
        """
        return self._statuses[transaction_id]

    def calls(self, method: str) -> list[str]:
        """Return the transaction ids passed to ``method``, in call order."""
        return [event.transaction_id for event in self._events if event.method == method]

    async def begin_transaction(self, context: SinkContext) -> RecordingTransaction[T]:
        """Begin a transaction whose id is fenced by job, attempt and subtask."""
        fence = (context.job_name, context.run_id, context.attempt, context.subtask_index)
        self._counters[fence] += 1
        transaction_id = "/".join(str(part) for part in (*fence, self._counters[fence]))
        txn: RecordingTransaction[T] = RecordingTransaction(transaction_id)
        self._statuses[txn.transaction_id] = OPEN
        self._record("begin_transaction", txn)
        return txn

    async def write(self, txn: RecordingTransaction[T], records: list[T]) -> None:
        """Add ``records`` to the open ``txn``."""
        status = self._statuses.get(txn.transaction_id, OPEN)
        if status is not OPEN:
            raise RuntimeError(
                f"write to transaction {txn.transaction_id!r}, which is {status.name}; "
                "only an OPEN transaction takes records"
            )
        txn.records.extend(records)
        self._events.append(TransactionEvent("write", txn.transaction_id, tuple(records)))

    async def pre_commit(self, txn: RecordingTransaction[T]) -> None:
        """Mark ``txn`` pre-committed; remember its id and records, which may no longer change."""
        self._record("pre_commit", txn)
        self._advance(txn, OPEN, PRE_COMMITTED)
        self._sealed[id(txn)] = (txn, txn.transaction_id, tuple(txn.records))

    def transaction_size(self, txn: RecordingTransaction[T]) -> int:
        """The transaction holds its records: checkpoints encode every one of them."""
        return len(txn.records)

    async def commit(self, txn: RecordingTransaction[T]) -> None:
        """Append the records of ``txn`` to ``committed``, unless it is committed already.

        Raises:
            TransactionChanged: ``txn`` changed since its pre-commit.
        """
        self._record("commit", txn)
        self._commit(txn)

    async def abort(self, txn: RecordingTransaction[T]) -> None:
        """Mark ``txn`` aborted; its records are dropped.

        Raises:
            TransactionChanged: ``txn`` changed since its pre-commit.
        """
        self._record("abort", txn)
        self._abort(txn)

    async def recover_and_commit(self, txn: RecordingTransaction[T]) -> None:
        """Commit ``txn`` restored from a checkpoint, unless it is committed already."""
        self._record("recover_and_commit", txn)
        self._commit(txn)

    async def recover_and_abort(self, txn: RecordingTransaction[T]) -> None:
        """Abort ``txn`` restored as open from a checkpoint."""
        self._record("recover_and_abort", txn)
        self._abort(txn)

    def _check_unchanged(self, txn: RecordingTransaction[T]) -> None:
        sealed = self._sealed.pop(id(txn), None)
        if sealed is None or sealed[1:] == (txn.transaction_id, tuple(txn.records)):
            return
        _, transaction_id, records = sealed
        raise TransactionChanged(
            f"transaction {transaction_id!r} changed after its pre-commit: it held "
            f"{len(records)} records then, and is {txn.transaction_id!r} with "
            f"{len(txn.records)} records now; a pre-committed transaction is immutable "
            "(checkpoints hold it by reference, not by copy): change only the open "
            "transaction, in write() and pre_commit()"
        )

    def _commit(self, txn: RecordingTransaction[T]) -> None:
        # A transaction this sink never saw comes from a checkpoint: it was pre-committed.
        self._check_unchanged(txn)
        if self._statuses.get(txn.transaction_id) is COMMITTED:
            return
        self._advance(txn, PRE_COMMITTED, COMMITTED)
        self._committed.extend(txn.records)
        self._commit_order.append(txn.transaction_id)

    def _abort(self, txn: RecordingTransaction[T]) -> None:
        self._check_unchanged(txn)
        if self._statuses.get(txn.transaction_id) is ABORTED:
            return
        self._advance(txn, OPEN, ABORTED)

    def _advance(
        self, txn: RecordingTransaction[T], unseen: TransactionStatus, target: TransactionStatus
    ) -> None:
        current = self._statuses.get(txn.transaction_id, unseen)
        self._statuses[txn.transaction_id] = current.advance(target)

    def _record(self, method: str, txn: RecordingTransaction[T]) -> None:
        self._events.append(TransactionEvent(method, txn.transaction_id))

    def _with_status(self, status: TransactionStatus) -> list[str]:
        return [tid for tid, current in self._statuses.items() if current is status]

    def __repr__(self) -> str:
        return (
            f"<RecordingTwoPhaseCommitSink committed={len(self._committed)} "
            f"open={len(self.open_transactions)} events={len(self._events)}>"
        )
