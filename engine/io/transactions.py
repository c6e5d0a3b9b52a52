"""TransactionLog: which transactions of a two-phase-commit sink are open, pending or done.

The functional core of ``TwoPhaseCommitSink``: plain synchronous bookkeeping with no event
loop and no I/O. The writer asks the log what to commit and reports what it did; the log
never talks to the external system itself.

A transaction moves along one lifecycle::

    OPEN ──pre-commit──▶ PRE_COMMITTED ──commit──▶ COMMITTED
      │                        │
      └────────abort───────────┴──────abort──────▶ ABORTED
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar

from lockgate.actors import IllegalStateTransition

__all__ = ["TransactionLog", "TransactionStatus"]

Txn = TypeVar("Txn")


class TransactionStatus(enum.Enum):
    """Where a transaction is in its life; ``advance`` allows only the edges of one table.

    A transaction is ``OPEN`` while records are written to it, ``PRE_COMMITTED`` once a
    checkpoint's snapshot flushed it (it may no longer change), then ``COMMITTED`` (visible
    downstream) or ``ABORTED`` (discarded). The last two are terminal.
    """

    OPEN = "open"
    PRE_COMMITTED = "pre_committed"
    COMMITTED = "committed"
    ABORTED = "aborted"

    @property
    def is_terminal(self) -> bool:
        """Whether the transaction has ended for good."""
        return not _TRANSITIONS[self]

    def advance(self, target: TransactionStatus) -> TransactionStatus:
        """Return ``target`` if the table allows moving there, else raise naming both states.

        Raises:
            IllegalStateTransition: the table has no edge from this status to ``target``.
        """
        if target not in _TRANSITIONS[self]:
            raise IllegalStateTransition("transaction", self, target)
        return target


_TRANSITIONS: dict[TransactionStatus, frozenset[TransactionStatus]] = {
    TransactionStatus.OPEN: frozenset({TransactionStatus.PRE_COMMITTED, TransactionStatus.ABORTED}),
    TransactionStatus.PRE_COMMITTED: frozenset(
        {TransactionStatus.COMMITTED, TransactionStatus.ABORTED}
    ),
    TransactionStatus.COMMITTED: frozenset(),
    TransactionStatus.ABORTED: frozenset(),
}


class TransactionLog(Generic[Txn]):
    """The open transaction of one sink subtask and the ones pre-committed per checkpoint.

    Invariants: at most one transaction is open (``current``); ``pending`` lists the
    pre-committed transactions in checkpoint order (the transactions themselves, never
    copies: they are immutable), and a new pre-commit must name a checkpoint after every
    pending one. Committed and aborted transactions are forgotten.

    Subsuming rule (Flink's): completing checkpoint n makes every transaction pre-committed
    at or before n committable, because checkpoint n could only complete after the older
    ones were durable or superseded; a late notification for an older checkpoint therefore
    finds nothing new, and an aborted checkpoint's transaction simply waits for a later one.

    A log rebuilt from state may hold several pre-committed transactions per checkpoint (state
    of several old subtasks redistributed to one) and ``lingering`` transactions: those that
    were open when the snapshot was taken, which recovery must abort.
    """

    def __init__(self) -> None:
        self._current: Txn | None = None
        self._pending: list[tuple[int, Txn]] = []
        self._lingering: list[Txn] = []

    @property
    def current(self) -> Txn | None:
        """The open transaction, or ``None`` when none is open."""
        return self._current

    @property
    def pending(self) -> Sequence[tuple[int, Txn]]:
        """The pre-committed transactions with their checkpoint ids, oldest checkpoint first."""
        return tuple(self._pending)

    @property
    def lingering(self) -> Sequence[Txn]:
        """Transactions restored as open: a previous attempt left them, recovery aborts them."""
        return tuple(self._lingering)

    def begin(self, txn: Txn) -> None:
        """Make ``txn`` the open transaction.

        Raises:
            ValueError: a transaction is open already; pre-commit or abort it first.
        """
        if self._current is not None:
            raise ValueError(
                f"a transaction is open already ({self._current!r}); "
                "pre-commit or abort it before beginning another"
            )
        self._current = txn

    def pre_commit(self, checkpoint_id: int, txn: Txn) -> None:
        """Record ``txn`` as pre-committed for ``checkpoint_id``.

        If ``txn`` is the open transaction, none is open afterwards.

        Raises:
            ValueError: ``checkpoint_id`` is not after every pending checkpoint.
        """
        newest = self._pending[-1][0] if self._pending else None
        if newest is not None and checkpoint_id <= newest:
            raise ValueError(
                f"checkpoint ids must increase: got {checkpoint_id} after {newest}; "
                "a transaction is pre-committed once per checkpoint"
            )
        self._pending.append((checkpoint_id, txn))
        if txn is self._current:
            self._current = None

    def committable_up_to(self, checkpoint_id: int) -> list[tuple[int, Txn]]:
        """Return the pending transactions that completing ``checkpoint_id`` commits, in order.

        These are all pre-committed at or before ``checkpoint_id`` (the subsuming rule).
        """
        return [entry for entry in self._pending if entry[0] <= checkpoint_id]

    def mark_committed(self, checkpoint_id: int) -> None:
        """Forget the transactions pre-committed for ``checkpoint_id``: they are committed.

        Raises:
            ValueError: no transaction is pending for ``checkpoint_id``.
        """
        remaining = [entry for entry in self._pending if entry[0] != checkpoint_id]
        if len(remaining) == len(self._pending):
            raise ValueError(f"no transaction is pending for checkpoint {checkpoint_id}")
        self._pending = remaining

    def mark_aborted(self) -> Txn:
        """Forget the open transaction, which was aborted, and return it.

        Raises:
            ValueError: no transaction is open.
        """
        if self._current is None:
            raise ValueError("no transaction is open, so none can be aborted")
        txn, self._current = self._current, None
        return txn

    def to_state(self) -> list[dict[str, Any]]:
        """Return the log as state items: one plain dict per transaction, each standing alone.

        Each item is ``{"status": "pre_committed", "checkpoint_id": n, "transaction": txn}``
        or ``{"status": "open", "transaction": txn}``, so the engine may split the list over
        subtasks like any list state.

        A pre-committed transaction is immutable (``TwoPhaseCommitSink``'s contract), so its
        item holds the transaction itself: the snapshot costs nothing per record, and the
        engine encodes it later, off the event loop. An open transaction changes as records
        are written, so its item holds a deep copy; the writer's is the one it began at the
        same barrier, still empty, so copying it costs nothing per record either.
        """
        items = [_pre_committed_item(checkpoint_id, txn) for checkpoint_id, txn in self._pending]
        open_ones = [*self._lingering, *([] if self._current is None else [self._current])]
        return items + [_open_item(txn) for txn in open_ones]

    @classmethod
    def from_state(cls, items: Iterable[Any]) -> TransactionLog[Txn]:
        """Rebuild a log from state items of ``to_state``, possibly of several subtasks.

        Pre-committed transactions become ``pending`` (in checkpoint order), open ones become
        ``lingering``; no transaction is ``current``.

        Raises:
            ValueError: an item is not one that ``to_state`` returns.
        """
        log: TransactionLog[Txn] = cls()
        for item in items:
            log._restore(item)
        log._pending.sort(key=lambda entry: entry[0])
        return log

    def _restore(self, item: Any) -> None:
        match item:
            case {
                "status": "pre_committed",
                "checkpoint_id": int(checkpoint_id),
                "transaction": txn,
            }:
                self._pending.append((checkpoint_id, txn))
            case {"status": "open", "transaction": txn}:
                self._lingering.append(txn)
            case _:
                raise ValueError(
                    f"cannot restore a transaction from state item {item!r}: expected a dict "
                    "from TransactionLog.to_state; restore from a checkpoint of this same sink"
                )

    def __repr__(self) -> str:
        checkpoints = [checkpoint_id for checkpoint_id, _ in self._pending]
        return (
            f"<TransactionLog current={self._current!r} pending={checkpoints} "
            f"lingering={len(self._lingering)}>"
        )


def _pre_committed_item(checkpoint_id: int, txn: Any) -> dict[str, Any]:
    return {
        "status": TransactionStatus.PRE_COMMITTED.value,
        "checkpoint_id": checkpoint_id,
        "transaction": txn,
    }


def _open_item(txn: Any) -> dict[str, Any]:
    return {"status": TransactionStatus.OPEN.value, "transaction": copy.deepcopy(txn)}
