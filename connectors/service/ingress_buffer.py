"""IngressBuffer: what an ingress holds, by split, shared by its sends and the job's readers."""

from __future__ import annotations

import re
from typing import Generic, TypeVar

from lockgate.connectors.service.ingress_log import IngressLog
from lockgate.connectors.service.wakeup import Wakeup

__all__ = ["IngressBuffer", "split_id", "split_index"]

T = TypeVar("T")

_SPLIT_ID = re.compile(r"ingress-(0|[1-9][0-9]*)")


def split_id(index: int) -> str:
    """The id of the ingress split with ``index``."""
    return f"ingress-{index}"


def split_index(split_id: str) -> int | None:
    """The index of an ingress split's id, or ``None`` if it is not one."""
    match = _SPLIT_ID.fullmatch(split_id)
    return None if match is None else int(match[1])


class IngressBuffer(Generic[T]):
    """The logs of an ingress's splits, and which of them a running job reads.

    One object per ``IngressSource``, shared by the service's sends and every reader of
    every attempt in this process. ``logs`` are ordered by split index, and split indexes
    run from 0 without gaps, so a key routes to the same split for the ingress's lifetime.
    ``reading`` holds the logs an open reader reads: only those accept records, so a record
    is always accepted while a reader will read it (or fail its ``wait_for_commit``).
    ``changed`` wakes senders when room, a reader or the end of input came.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.logs: list[IngressLog[T]] = []
        self.reading: set[str] = set()
        self.closed = False
        self.accepted = 0
        self.uid: str | None = None
        self.changed = Wakeup()

    @property
    def unread(self) -> int:
        """Records accepted and not yet read, in all splits."""
        return sum(log.unread for log in self.logs)

    @property
    def held(self) -> int:
        """Records held in all splits: not read yet, or read and not yet covered."""
        return sum(log.held for log in self.logs)

    @property
    def full(self) -> bool:
        """Whether ``capacity`` records wait to be read."""
        logs = self.logs
        if len(logs) == 1:  # asked on every send: the sum of one, without a generator
            return logs[0].end - logs[0].read >= self.capacity
        return self.unread >= self.capacity

    def is_read(self, log: IngressLog[T]) -> bool:
        """Whether an open reader reads ``log``."""
        return log.split_id in self.reading

    def ensure_splits(self, count: int) -> list[IngressLog[T]]:
        """Make sure splits 0 to ``count - 1`` exist; return every split's log."""
        while len(self.logs) < count:
            self.logs.append(IngressLog(split_id(len(self.logs))))
        return list(self.logs)

    def log(self, index: int) -> IngressLog[T]:
        """The log of split ``index``, made (with those before it) if it did not exist."""
        return self.ensure_splits(index + 1)[index]

    def start_reading(self, logs: list[IngressLog[T]]) -> None:
        """A reader of a running job opened on ``logs``: they accept records."""
        self.reading.update(log.split_id for log in logs)
        self.changed.notify()

    def stop_reading(self, logs: list[IngressLog[T]]) -> None:
        """A reader closed: its logs accept nothing until the next attempt reads them."""
        self.reading.difference_update(log.split_id for log in logs)
        self.changed.notify()

    def close(self) -> None:
        """No more records: readers end once they read what is held."""
        self.closed = True
        self.changed.notify()
        for log in self.logs:
            log.arrived.notify()

    def __repr__(self) -> str:
        return (
            f"<IngressBuffer splits={len(self.logs)} unread={self.unread}/{self.capacity} "
            f"held={self.held} reading={len(self.reading)}{' closed' if self.closed else ''}>"
        )
