"""Sink and SinkWriter: how records leave a job."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lockgate.engine.events import Watermark
from lockgate.engine.io.transactions import TransactionLog
from lockgate.engine.time.clock import Clock

if TYPE_CHECKING:
    from lockgate.engine.savepoints.type_codec import TypeCodec

__all__ = ["Sink", "SinkContext", "SinkWriter", "TwoPhaseCommitSink", "TwoPhaseCommitWriter"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SinkContext:
    """Where a writer runs, and what it must recover.

    ``restored_state`` holds the items that writers of the restored checkpoint returned from
    ``snapshot_state``, redistributed over the new subtasks (empty on a fresh start).
    ``job_name``, ``run_id`` (random, new for every ``execute``/``start``, so a job restored
    in a new process never reuses an id of the run it replaces) and ``attempt`` (the restart
    count within the run) let a writer fence its transaction ids.
    """

    uid: str
    subtask_index: int
    parallelism: int
    clock: Clock
    restored_state: tuple[Any, ...] = ()
    job_name: str = "job"
    attempt: int = 0
    run_id: str = "run"


class SinkWriter(ABC, Generic[T]):
    """Writes the records that reach one subtask of a sink, in the order they arrive.

    Checkpoint hooks, in the order the engine calls them: ``snapshot_state`` when the
    subtask snapshots checkpoint n (everything written before it belongs to n); then either
    ``notify_checkpoint_complete(n)`` once n is durable, or ``notify_checkpoint_aborted(n)``.
    Notifications can be late or skipped: completing n implies every checkpoint before n.
    """

    async def open(self) -> None:
        """Acquire resources before the first write."""

    @abstractmethod
    async def write(self, records: list[T]) -> None:
        """Write a batch of records; waiting here backpressures the job."""

    async def write_watermark(self, watermark: Watermark) -> None:
        """Event time reached ``watermark.timestamp``: no record at or below it follows.

        Called in order with ``write``; most sinks ignore it (Flink's ``writeWatermark``).
        """

    async def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        """Return the items to store for checkpoint ``checkpoint_id`` (pre-commit here).

        The engine encodes the items later, off the event loop, while records keep being
        written: return nothing that ``write`` changes afterwards (copy it, or begin anew).
        """
        return []

    def snapshot_size(self) -> int:
        """How many records the items the last ``snapshot_state`` returned hold; 0 by default.

        Their cost to encode: the engine encodes a small snapshot on the event loop at once
        and a large one in a worker thread, so a writer whose state holds records says so.
        """
        return 0

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` and every one before it are complete."""

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` will never complete."""

    async def finish(self) -> None:
        """Make everything written durable: the input has ended and nothing more will come."""

    async def close(self) -> None:
        """Release resources; called once, also after a failure (then without ``finish``)."""


class Sink(ABC, Generic[T]):
    """Where a job's records go: one writer per parallel subtask.

    The sink object is shared by every subtask of every attempt in the process; per-subtask
    state lives in the writers it creates. Its guarantee depends on the writer: a plain
    writer is at-least-once across restarts, a ``TwoPhaseCommitSink`` exactly-once.
    """

    @abstractmethod
    def create_writer(self, context: SinkContext) -> SinkWriter[T]:
        """Return the writer for one subtask."""

    def state_types(self) -> Sequence[TypeCodec]:
        """The types of the state the writers return, beyond plain data, for savepoints.

        Savepoints encode only plain data and registered types (``TypeCodec``); a sink whose
        writers store, say, dataclass transactions names them here, and every job using the
        sink registers them.
        """
        return ()


Txn = TypeVar("Txn")


class TwoPhaseCommitSink(Sink[T], Generic[T, Txn]):
    """A sink that writes into transactions and commits them when checkpoints complete.

    Flink's ``TwoPhaseCommitSinkFunction``. Each subtask's writer keeps one transaction open
    and writes every record into it. When the subtask snapshots checkpoint n it pre-commits
    that transaction (phase one: flush it so it can no longer fail to commit), remembers it
    under n, and begins the next one. When checkpoint n completes it commits, in checkpoint
    order, every transaction pre-committed at or before n (phase two). Records therefore
    become visible exactly once, and only once a checkpoint holding them is durable.

    The subsuming contract: completing n implies every checkpoint before n, so a missed or
    late notification loses nothing; an aborted checkpoint's transaction stays pending and is
    committed with the next checkpoint that completes. After a failure the writers of the
    next attempt get the transactions recorded in the restored checkpoint: they call
    ``recover_and_commit`` on each pre-committed one (it may have been committed already, so
    ``commit`` must be idempotent) and ``recover_and_abort`` on each that was open.

    Subclasses decide what a transaction is; it must be plain, picklable data (a transaction
    id, a temporary file name), because it is stored in checkpoints and may be restored in
    another process. Fence ids with ``SinkContext.job_name``, ``run_id``, ``attempt`` and
    ``subtask_index`` so that attempts never share a transaction.

    A pre-committed transaction is immutable: once ``pre_commit`` has returned, nothing may
    change it, neither ``commit``, ``abort`` and the recovery methods, nor anything else.
    Checkpoints hold it by reference, not by copy, and encode it after the snapshot (in a
    worker thread when it is large), maybe while it commits. Only the open transaction
    changes (``write``, and ``pre_commit`` itself). A transaction that holds its records
    (rather than names of where they are) says how many in ``transaction_size``, and
    pickles them with ``lockgate.engine.io.record_chunks``, so that encoding them never
    stalls the event loop. ``lockgate.engine.testing.RecordingTwoPhaseCommitSink`` fails
    loudly when a pre-committed transaction changes.
    """

    def create_writer(self, context: SinkContext) -> TwoPhaseCommitWriter[T, Txn]:
        """Return the engine's writer, which drives this sink's transactions."""
        return TwoPhaseCommitWriter(self, context)

    @abstractmethod
    async def begin_transaction(self, context: SinkContext) -> Txn:
        """Start a transaction for the subtask of ``context`` and return it."""

    @abstractmethod
    async def write(self, txn: Txn, records: list[T]) -> None:
        """Write ``records`` into the open transaction ``txn``."""

    @abstractmethod
    async def pre_commit(self, txn: Txn) -> None:
        """Flush ``txn`` so that a later ``commit`` cannot fail; from then on it never changes."""

    @abstractmethod
    async def commit(self, txn: Txn) -> None:
        """Make the records of the pre-committed ``txn`` visible; a second call does nothing."""

    @abstractmethod
    async def abort(self, txn: Txn) -> None:
        """Discard ``txn`` and the records written to it."""

    async def recover_and_commit(self, txn: Txn) -> None:
        """Commit a pre-committed ``txn`` restored from a checkpoint; by default ``commit``."""
        await self.commit(txn)

    async def recover_and_abort(self, txn: Txn) -> None:
        """Abort a ``txn`` restored as open from a checkpoint; by default ``abort``."""
        await self.abort(txn)

    def transaction_size(self, txn: Txn) -> int:
        """How many records ``txn`` holds itself, for checkpoints to encode; 0 by default.

        0 is right for a transaction of names and ids (a file, an upload, a prepared
        transaction); a transaction buffering its records returns their number, so that a
        checkpoint holding many of them is encoded off the event loop.
        """
        return 0


class TwoPhaseCommitWriter(SinkWriter[T], Generic[T, Txn]):
    """The writer of one subtask of a ``TwoPhaseCommitSink``: its checkpoint hooks drive it.

    Invariant: between ``open`` and ``close`` exactly one transaction is open (none once
    ``finish`` was followed by the final snapshot); every record written goes into it, and
    the transactions it pre-committed are committed only by a completed checkpoint at or
    after theirs, each once, oldest first.
    """

    def __init__(self, sink: TwoPhaseCommitSink[T, Txn], context: SinkContext) -> None:
        self._sink = sink
        self._context = context
        self._log: TransactionLog[Txn] = TransactionLog()
        self._finished = False

    @property
    def transactions(self) -> TransactionLog[Txn]:
        """The log of this writer's open and pending transactions (read it; do not change it)."""
        return self._log

    async def open(self) -> None:
        """Recover the transactions of the restored checkpoint, then begin a transaction."""
        restored: TransactionLog[Txn] = TransactionLog.from_state(self._context.restored_state)
        for _, txn in restored.pending:
            await self._sink.recover_and_commit(txn)
        for txn in restored.lingering:
            await self._sink.recover_and_abort(txn)
        await self._begin()

    async def write(self, records: list[T]) -> None:
        """Write ``records`` into the open transaction."""
        await self._sink.write(self._open_transaction(), records)

    async def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        """Pre-commit the open transaction for ``checkpoint_id``, begin the next one.

        Returns the transaction log as state items: plain data, one item per transaction.
        After ``finish`` no new transaction begins: the input has ended.
        """
        if self._log.current is not None or not self._finished:
            txn = self._open_transaction()
            await self._sink.pre_commit(txn)
            self._log.pre_commit(checkpoint_id, txn)
        if not self._finished:
            await self._begin()
        return self._log.to_state()

    def snapshot_size(self) -> int:
        """The records the pending and open transactions hold (``transaction_size``)."""
        current = self._log.current
        held = [txn for _, txn in self._log.pending] + ([] if current is None else [current])
        return sum(self._sink.transaction_size(txn) for txn in held)

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Commit every transaction pre-committed at or before ``checkpoint_id``, oldest first.

        A late notification for an older checkpoint finds nothing new to commit.
        """
        for pending_id, txn in self._log.committable_up_to(checkpoint_id):
            await self._sink.commit(txn)
            self._log.mark_committed(pending_id)

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Keep the transaction of ``checkpoint_id`` pending: a later checkpoint commits it."""

    async def finish(self) -> None:
        """Note that the input ended: the final snapshot begins no new transaction."""
        self._finished = True

    async def close(self) -> None:
        """Abort the open transaction, never pre-committed; pending ones stay for recovery."""
        txn = self._log.current
        if txn is not None:
            await self._sink.abort(txn)
            self._log.mark_aborted()

    async def _begin(self) -> None:
        self._log.begin(await self._sink.begin_transaction(self._context))

    def _open_transaction(self) -> Txn:
        txn = self._log.current
        if txn is None:
            context = self._context
            raise RuntimeError(
                f"sink '{context.uid}' (subtask {context.subtask_index + 1}/"
                f"{context.parallelism}) has no open transaction: it was not opened, or it "
                "was closed or finished; call open() before writing"
            )
        return txn

    def __repr__(self) -> str:
        context = self._context
        return (
            f"<TwoPhaseCommitWriter '{context.uid}' subtask {context.subtask_index + 1}/"
            f"{context.parallelism} {self._log!r}>"
        )
