"""IngressLog: one split of an ingress, the records it holds until a checkpoint covers them."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

import anyio

from lockgate.connectors.service.wakeup import Wakeup

__all__ = ["CommitTicket", "IngressLog"]

T = TypeVar("T")

_COMPACT_AT = 1024  # dropped records are removed from the list in chunks of at least this


class CommitTicket:
    """The outcome of a record sent with ``wait_for_commit``: committed, or an error."""

    def __init__(self) -> None:
        self._done = anyio.Event()
        self._error: Exception | None = None

    def commit(self) -> None:
        """A completed checkpoint covers the record."""
        self._done.set()

    def fail(self, error: Exception) -> None:
        """The record's attempt ended before a checkpoint covered it."""
        self._error = error
        self._done.set()

    async def wait_committed(self) -> None:
        """Return once committed; raise the error if the attempt ended first."""
        await self._done.wait()
        if self._error is not None:
            raise self._error


class IngressLog(Generic[T]):
    """The records of one ingress split, by position, from the oldest one still held.

    A position counts the records accepted into the split (from where a restore started
    it). Invariants: ``held_from <= read <= end``; records before ``held_from`` are gone;
    every ticket is for a record at or after ``committed``, and tickets are in position
    order. A log holds the records its reader has read until a completed checkpoint covers
    them (``commit_to``), so that the next attempt, rewound to that checkpoint, reads them
    again; a log that does not hold (the job takes no checkpoints) lets them go when read.
    """

    def __init__(self, split_id: str, *, start: int = 0) -> None:
        self.split_id = split_id
        self.read = start
        self.committed = start
        self.arrived = Wakeup()
        self._records: list[T] = []
        self._base = start  # the position of _records[0]
        self._dropped = 0  # records at the front of _records that are no longer held
        self._keys: dict[int, str] = {}
        self._tickets: deque[tuple[int, CommitTicket]] = deque()

    @property
    def end(self) -> int:
        """The position the next record accepted gets."""
        return self._base + len(self._records)

    @property
    def held_from(self) -> int:
        """The position of the oldest record still held."""
        return self._base + self._dropped

    @property
    def unread(self) -> int:
        """Records accepted and not read yet."""
        return self.end - self.read

    @property
    def held(self) -> int:
        """Records held: read and not yet covered, or not read yet."""
        return self.end - self.held_from

    @property
    def has_keys(self) -> bool:
        """Whether a record held carries an idempotency key."""
        return bool(self._keys)

    def append(self, record: T, key: str | None = None) -> int:
        """Accept ``record`` (with its idempotency key) and return its position."""
        position = self.end
        self._records.append(record)
        if key is not None:
            self._keys[position] = key
        self.arrived.notify()
        return position

    def wait_for(self, position: int, ticket: CommitTicket) -> None:
        """Resolve ``ticket`` when the record at ``position`` (the last one) is covered."""
        self._tickets.append((position, ticket))

    def take(self, max_records: int) -> tuple[int, list[T]]:
        """Read up to ``max_records`` records; return the position of the first and them."""
        start = self.read
        first = start - self._base
        records = self._records[first : first + max_records]
        self.read = start + len(records)
        return start, records

    def key_at(self, position: int) -> str | None:
        """The idempotency key of the record at ``position``, if it has one."""
        return self._keys.get(position)

    def rewind(self, position: int) -> None:
        """Read on from ``position``, where a restored checkpoint left the split.

        Records before ``held_from`` are gone: reading resumes at the oldest one held. A
        position past ``end`` belongs to a history this log never had (a savepoint restored
        into a new ingress): the log starts over there.
        """
        if position > self.end:
            self._records.clear()
            self._keys.clear()
            self._base, self._dropped = position, 0
            self.committed = max(self.committed, position)
        self.read = max(position, self.held_from)

    def commit_to(self, position: int, *, holds: bool = True) -> None:
        """A completed checkpoint covers every record before ``position``."""
        self.committed = max(self.committed, position)
        while self._tickets and self._tickets[0][0] < self.committed:
            self._tickets.popleft()[1].commit()
        if holds:
            self.release_to(min(self.committed, self.read))

    def release_to(self, position: int) -> None:
        """Hold no record before ``position`` (at most ``read``) any longer."""
        position = min(position, self.read)
        if position <= self.held_from:
            return
        for dropped in range(self.held_from, position) if self._keys else ():
            self._keys.pop(dropped, None)
        self._dropped = position - self._base
        if self._dropped >= _COMPACT_AT and 2 * self._dropped >= len(self._records):
            del self._records[: self._dropped]
            self._base, self._dropped = position, 0

    def fail_tickets(self, error: Callable[[], Exception]) -> int:
        """Fail every ticket not yet resolved with a new ``error()``; return how many."""
        failed = len(self._tickets)
        while self._tickets:
            self._tickets.popleft()[1].fail(error())
        return failed

    def __repr__(self) -> str:
        return (
            f"<IngressLog {self.split_id!r} held={self.held_from}..{self.end} "
            f"read={self.read} committed={self.committed} tickets={len(self._tickets)}>"
        )
