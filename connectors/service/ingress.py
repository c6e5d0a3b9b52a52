"""IngressSource: a source that the service it runs in pushes records into."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio.lowlevel

from lockgate.connectors.errors import IngressClosed, IngressFull, InvalidSplit
from lockgate.connectors.service.ingress_buffer import IngressBuffer, split_index
from lockgate.connectors.service.ingress_log import CommitTicket, IngressLog
from lockgate.connectors.service.ingress_reader import IngressReader, ReadSplit
from lockgate.connectors.service.recent_keys import RecentKeys
from lockgate.engine import stable_hash
from lockgate.engine.io.driver_side import DriverSide, on_driver
from lockgate.engine.io.sources import Source, SourceContext, SourceReader, SourceSplit

__all__ = ["IngressSource", "IngressStatistics"]

T = TypeVar("T")

_YIELD_EVERY = 64  # sends accepted one after another before send gives the loop a turn


@dataclass(frozen=True, slots=True)
class IngressStatistics:
    """An ingress now: records accepted in all, waiting to be read, and held for a replay.

    ``held`` counts the records not read yet and those read that no completed checkpoint
    covers yet; ``reading`` counts the splits an open reader of a running job reads.
    """

    accepted: int
    unread: int
    held: int
    capacity: int
    splits: int
    reading: int
    closed: bool


class IngressSource(Source[T], DriverSide):
    """A source the service pushes records into: ``await ingress.send(record)``.

    Records go into one of the source's splits: to the one with the fewest records waiting
    (or where ``key(record)`` hashes, so that a key's records stay in order), and every
    subtask reads its splits. ``send`` waits while ``capacity`` records wait to be read (the
    job is backpressured) or while no job reads the ingress (it has not started, or it is
    restarting); ``send_nowait`` raises ``IngressFull`` instead. The input is unbounded:
    the job runs until it is cancelled or stopped, unless ``close()`` ends it (the job then
    reads what was sent, and finishes with a final checkpoint, as with a bounded source).

    Exactly-once within one process: a split holds the records its subtask read until a
    completed checkpoint covers them, so an attempt restarted after a failure reads again
    exactly the records after its checkpoint. Records held are in memory only: a crash of
    the process loses those no completed checkpoint covers. Three ways to send:

    - ``await send(record)``: fire and forget; lost if the process dies before the next
      checkpoint completes.
    - ``await send(record, wait_for_commit=True)``: returns once a completed checkpoint
      covers the record; raises ``IngressNotCommitted`` if the job's attempt ended first
      (the record may still be reflected by a restarted attempt).
    - ``await send(record, wait_for_commit=True, idempotency_key=...)``: a send retried with
      the same key within ``idempotency_ttl`` seconds is reflected once: the keys read are
      kept with each split's position in checkpoints, so they survive a restore. A retried
      record must go to the same split: it does when it has the same key (or, with ``key``,
      the same ``key(record)``).

    Without ``enable_checkpointing`` a split holds nothing once read. ``splits`` is the
    number of splits, fixed at the first start (by default the source's parallelism then):
    a job restored at a higher parallelism reads with at most that many subtasks. One job at
    a time reads an ingress; keep the same object across its restarts and restores.

    Under every executor the records stay in this object, in the process that started the
    job: a subtask in a worker process reads them through it (``DriverSide``), batch by
    batch, and its checkpoints and commits reach it there.
    """

    driver_only = ("_buffer", "_hosted")

    def __init__(
        self,
        *,
        capacity: int = 10_000,
        key: Callable[[T], Any] | None = None,
        splits: int | None = None,
        idempotency_ttl: float = 3600.0,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1; got {capacity}")
        if splits is not None and splits < 1:
            raise ValueError(f"splits must be at least 1; got {splits}")
        if idempotency_ttl <= 0:
            raise ValueError(f"idempotency_ttl must be positive; got {idempotency_ttl}")
        self._buffer: IngressBuffer[T] = IngressBuffer(capacity)
        self._key = key
        self._splits = splits
        self._ttl = idempotency_ttl
        self._turn = 0
        self._hosted: dict[str, SourceReader[T]] = {}  # the readers of worker processes
        self._sends = 0

    @property
    def bounded(self) -> bool:
        """``False``: the input ends only when ``close()`` is called."""
        return False

    @property
    def closed(self) -> bool:
        """Whether ``close()`` ended the input."""
        return self._buffer.closed

    async def send(
        self, record: T, *, wait_for_commit: bool = False, idempotency_key: str | None = None
    ) -> None:
        """Accept ``record``, waiting for room and for a job that reads the ingress.

        With ``wait_for_commit``, return only once a completed checkpoint covers the record.
        Cancelled before it was accepted, the record is not sent; cancelled while waiting for
        the commit, it was. As ``asyncio.Queue.put``, a send that finds room accepts the
        record without yielding; every 64th send is a checkpoint (it may be cancelled, and
        the loop's other tasks get a turn), so a service sending in a loop fills the job's
        batches and starves no other task.

        Raises:
            IngressClosed: ``close()`` was called.
            IngressNotCommitted: ``wait_for_commit`` and the job's attempt ended before a
                checkpoint covered the record.
        """
        _check_key(idempotency_key)
        self._sends += 1
        if self._sends % _YIELD_EVERY == 0:
            await anyio.lowlevel.checkpoint()
        log = self._route(record, idempotency_key)
        if log is None or self._buffer.full:
            log = await self._wait_for_room(record, idempotency_key)
        ticket = self._accept(log, record, idempotency_key, wait_for_commit=wait_for_commit)
        if ticket is not None:
            await ticket.wait_committed()

    def send_nowait(self, record: T, *, idempotency_key: str | None = None) -> None:
        """Accept ``record`` now, or raise.

        Raises:
            IngressFull: ``capacity`` records wait to be read, or no job reads the ingress.
            IngressClosed: ``close()`` was called.
        """
        _check_key(idempotency_key)
        log = self._route(record, idempotency_key)
        if log is None or self._buffer.full:
            raise self._full(log)
        self._accept(log, record, idempotency_key, wait_for_commit=False)

    async def send_many(self, records: Iterable[T], *, wait_for_commit: bool = False) -> None:
        """Accept every record in turn, waiting for room as ``send`` does.

        With ``wait_for_commit``, return once completed checkpoints cover them all.

        Raises:
            IngressClosed: ``close()`` was called; the records before were accepted.
            IngressNotCommitted: ``wait_for_commit``, for the first record whose attempt
                ended before a checkpoint covered it.
        """
        await anyio.lowlevel.checkpoint()
        tickets = []
        for record in records:
            log = await self._wait_for_room(record, None)
            tickets.append(self._accept(log, record, None, wait_for_commit=wait_for_commit))
        for ticket in tickets:
            if ticket is not None:
                await ticket.wait_committed()

    def close(self) -> None:
        """End the input: the job reads what was sent, then finishes; sends raise from now."""
        self._buffer.close()

    def statistics(self) -> IngressStatistics:
        """What the ingress holds now."""
        buffer = self._buffer
        return IngressStatistics(
            accepted=buffer.accepted,
            unread=buffer.unread,
            held=buffer.held,
            capacity=buffer.capacity,
            splits=len(buffer.logs),
            reading=len(buffer.reading),
            closed=buffer.closed,
        )

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        """Return every split, each from the oldest record it holds (``splits`` at first)."""
        if not self.is_driver_copy:
            splits: list[SourceSplit] = self.call_on_driver("create_splits", parallelism)
            return splits
        count = max(self._splits or parallelism, len(self._buffer.logs))
        return [
            SourceSplit(log.split_id, {"next": log.held_from})
            for log in self._buffer.ensure_splits(count)
        ]

    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[T]:
        """Return a reader of ``splits``, each rewound to its position.

        Raises:
            InvalidSplit: a split is not an ingress split, or its position is malformed.
        """
        if not self.is_driver_copy:
            return _WorkerReader(self, list(splits), context)
        self._buffer.uid = context.uid
        read_splits = [self._read_split(split, context) for split in splits]
        return IngressReader(self._buffer, read_splits, context)

    async def workers_gone(self) -> None:
        """Close the readers of worker processes that ended: their senders hear it."""
        while self._hosted:
            await self._hosted.popitem()[1].close()

    @on_driver
    async def _host_reader(
        self, reader: str, splits: list[SourceSplit], context: SourceContext
    ) -> list[SourceSplit]:
        self._hosted[reader] = hosted = self.create_reader(splits, context)
        await hosted.open()
        return hosted.snapshot_splits()

    @on_driver
    async def _hosted_read(self, reader: str, max_records: int) -> tuple[list[T], Any]:
        hosted = self._hosted[reader]
        return await hosted.read(max_records), hosted.snapshot_splits()

    def _hosted_checkpoint(
        self, reader: str, checkpoint_id: int, splits: list[SourceSplit]
    ) -> list[SourceSplit]:
        return self._hosted[reader].checkpoint_splits(checkpoint_id, splits)

    @on_driver
    async def _hosted_notify(self, reader: str, checkpoint_id: int, *, completed: bool) -> None:
        hosted = self._hosted[reader]
        if completed:
            await hosted.notify_checkpoint_complete(checkpoint_id)
        else:
            await hosted.notify_checkpoint_aborted(checkpoint_id)

    @on_driver
    async def _hosted_close(self, reader: str) -> None:
        hosted = self._hosted.pop(reader, None)
        if hosted is not None:
            await hosted.close()

    def _read_split(self, split: SourceSplit, context: SourceContext) -> ReadSplit[T]:
        index = split_index(split.split_id)
        position = split.position
        if index is None or not _is_position(position):
            raise InvalidSplit(
                f"ingress '{context.uid}' (subtask {context.subtask_index + 1}/"
                f"{context.parallelism}) cannot resume split '{split.split_id}' from "
                f"{position!r}: expected a split 'ingress-<n>' at {{'next': n}} or "
                "{'next': n, 'keys': {key: seconds}}; restore from a snapshot of an ingress"
            )
        log = self._buffer.log(index)
        log.rewind(position["next"])
        now = context.clock.now()
        remaining = position.get("keys", {})
        keys = RecentKeys.restored(self._ttl, remaining, position=position["next"], now=now)
        return ReadSplit(log, keys)

    async def _wait_for_room(self, record: T, key: str | None) -> IngressLog[T]:
        while (log := self._route(record, key)) is None or self._buffer.full:
            await self._buffer.changed.wait()
        return log

    def _route(self, record: T, key: str | None) -> IngressLog[T] | None:
        # The log the record goes to, or None while no open reader reads that log.
        buffer = self._buffer
        if buffer.closed:
            raise IngressClosed(f"{self._name()} was closed: its input ended; send nothing more")
        if not buffer.logs:
            return None
        if self._key is None and key is None:
            return self._least_waiting()
        routing_key = key if self._key is None else self._key(record)
        log = buffer.logs[stable_hash(routing_key) % len(buffer.logs)]
        return log if buffer.is_read(log) else None

    def _least_waiting(self) -> IngressLog[T] | None:
        logs = self._buffer.logs
        if len(logs) == 1:  # the common case, on every send: no choice to make
            return logs[0] if self._buffer.is_read(logs[0]) else None
        best: IngressLog[T] | None = None
        for turn in range(self._turn, self._turn + len(logs)):
            log = logs[turn % len(logs)]
            if self._buffer.is_read(log) and (best is None or log.unread < best.unread):
                best = log
        if best is not None:
            self._turn = logs.index(best) + 1
        return best

    def _accept(
        self, log: IngressLog[T], record: T, key: str | None, *, wait_for_commit: bool
    ) -> CommitTicket | None:
        position = log.append(record, key)
        self._buffer.accepted += 1
        if not wait_for_commit:
            return None
        ticket = CommitTicket()
        log.wait_for(position, ticket)
        return ticket

    def _full(self, log: IngressLog[T] | None) -> IngressFull:
        if log is None:
            return IngressFull(
                f"{self._name()} has no running job reading it now (it has not started, or "
                "it is restarting); await send() to wait until it runs"
            )
        return IngressFull(
            f"{self._name()} is full: {self._buffer.unread} records wait for the job to read "
            f"them (capacity {self._buffer.capacity}); await send() to wait for room, or "
            "give the IngressSource a larger capacity"
        )

    def _name(self) -> str:
        uid = self._buffer.uid
        return "ingress" if uid is None else f"ingress '{uid}'"

    def __repr__(self) -> str:
        return f"<IngressSource {self._buffer!r}>"


class _WorkerReader(SourceReader[T]):
    """A worker's reader of an ingress: the reader itself runs in the driving process.

    Each read brings a batch and the positions after it, so ``snapshot_splits`` describes
    exactly the records returned; ``checkpoint_splits`` asks the reader there (it keeps the
    idempotency keys), blocking for the round trip.
    """

    def __init__(
        self, source: IngressSource[T], splits: list[SourceSplit], context: SourceContext
    ) -> None:
        self._source = source
        self._splits = splits
        self._context = context
        self._id = f"{context.uid}/{context.subtask_index}/{uuid.uuid4().hex}"

    async def open(self) -> None:
        self._splits = await self._source._host_reader(self._id, self._splits, self._context)

    async def read(self, max_records: int) -> list[T]:
        records, self._splits = await self._source._hosted_read(self._id, max_records)
        return records

    def snapshot_splits(self) -> list[SourceSplit]:
        return list(self._splits)

    def checkpoint_splits(self, checkpoint_id: int, splits: list[SourceSplit]) -> list[SourceSplit]:
        covered: list[SourceSplit] = self._source.call_on_driver(
            "_hosted_checkpoint", self._id, checkpoint_id, splits
        )
        return covered

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        await self._source._hosted_notify(self._id, checkpoint_id, completed=True)

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        await self._source._hosted_notify(self._id, checkpoint_id, completed=False)

    async def close(self) -> None:
        await self._source._hosted_close(self._id)


def _check_key(key: Any) -> None:
    if key is not None and not isinstance(key, str):
        raise TypeError(f"idempotency_key must be a str; got {type(key).__name__} {key!r}")


def _is_position(position: Any) -> bool:
    if not isinstance(position, dict) or not {"next"} <= set(position) <= {"next", "keys"}:
        return False
    start, keys = position["next"], position.get("keys", {})
    is_index = isinstance(start, int) and not isinstance(start, bool) and start >= 0
    return is_index and isinstance(keys, dict) and all(isinstance(k, str) for k in keys)
