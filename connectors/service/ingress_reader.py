"""IngressReader: reads the ingress splits of one subtask, each record once per attempt."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from lockgate.connectors.errors import IngressNotCommitted
from lockgate.connectors.service.ingress_buffer import IngressBuffer
from lockgate.connectors.service.ingress_log import IngressLog
from lockgate.connectors.service.recent_keys import RecentKeys
from lockgate.connectors.service.wakeup import wait_any
from lockgate.engine.io.sources import SourceContext, SourceReader, SourceSplit

__all__ = ["IngressReader", "ReadSplit"]

T = TypeVar("T")


@dataclass(slots=True)
class ReadSplit(Generic[T]):
    """One split a reader reads: its log, and the idempotency keys read from it."""

    log: IngressLog[T]
    keys: RecentKeys

    def take(self, max_records: int, now: float) -> list[T]:
        """Read up to ``max_records`` records, leaving out duplicates of a recent key."""
        start, records = self.log.take(max_records)
        if not self.log.has_keys:
            return records
        return [
            record
            for position, record in enumerate(records, start)
            if (key := self.log.key_at(position)) is None or not self.keys.seen(key, position, now)
        ]

    def position(self) -> dict[str, Any]:
        """The split's position after the last record read."""
        return {"next": self.log.read}

    def checkpoint_position(self, position: int, now: float) -> dict[str, Any]:
        """A checkpoint's position: ``position``, and the live keys of the records before it."""
        keys = self.keys.remaining_before(position, now)
        return {"next": position, "keys": keys} if keys else {"next": position}


class IngressReader(SourceReader[T]):
    """Reads the splits of one subtask in turn, from the positions it was given.

    Each split's records come in the order they were accepted, each once per attempt; a
    record whose idempotency key was read within its time to live is left out. The reader
    remembers which positions each checkpoint stores; when one completes, the records
    before them are covered: their ``wait_for_commit`` senders return, and the logs let them
    go. When the reader closes (the attempt ended: finished, failed, stopped or cancelled),
    every sender still waiting for a record of its splits gets ``IngressNotCommitted``.
    """

    def __init__(
        self, buffer: IngressBuffer[T], splits: list[ReadSplit[T]], context: SourceContext
    ) -> None:
        self._buffer = buffer
        self._splits = splits
        self._context = context
        self._covers: dict[int, dict[str, int]] = {}
        self._by_id = {split.log.split_id: split for split in splits}
        self._returned = self._read_positions()
        self._turn = 0

    async def open(self) -> None:
        """Start reading: sends to these splits are accepted from now on."""
        self._buffer.start_reading([split.log for split in self._splits])

    async def read(self, max_records: int) -> list[T]:
        """Return the next records of a split, waiting for some; ``[]`` once input ended."""
        while True:
            records = self._take(max_records)
            if records:
                self._returned = self._read_positions()
                return records
            if records is None:
                if self._buffer.closed or not self._splits:
                    return []  # a subtask given no split ends at once, as with any source
                await wait_any(split.log.arrived for split in self._splits)

    def snapshot_splits(self) -> list[SourceSplit]:
        """Every split with the position after the last record returned."""
        return [SourceSplit(split.log.split_id, split.position()) for split in self._splits]

    def checkpoint_splits(self, checkpoint_id: int, splits: list[SourceSplit]) -> list[SourceSplit]:
        """Remember what ``checkpoint_id`` covers; add the live idempotency keys before it.

        When ``splits`` are the positions after the last batch this reader returned (no
        batch waits to be delivered), the checkpoint covers the duplicates read since then
        too: they were left out, so a replay from past them yields the same records, and a
        retried send whose record was a duplicate returns once this checkpoint completes
        rather than waiting for a later record of its split.
        """
        covers = {split.split_id: split.position["next"] for split in splits}
        if covers == self._returned:
            covers = self._read_positions()
        self._covers[checkpoint_id] = covers
        now = self._context.clock.now()
        return [
            SourceSplit(split_id, self._by_id[split_id].checkpoint_position(position, now))
            for split_id, position in covers.items()
        ]

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Cover the records before the positions of ``checkpoint_id`` (and older ones)."""
        done = [cid for cid in self._covers if cid <= checkpoint_id]
        if not done:
            return
        covers = self._covers[max(done)]
        for cid in done:
            del self._covers[cid]
        for split in self._splits:
            split.log.commit_to(covers[split.log.split_id], holds=self._context.checkpointing)

    async def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Forget ``checkpoint_id``: a later checkpoint covers its records."""
        self._covers.pop(checkpoint_id, None)

    async def close(self) -> None:
        """Stop reading; fail the senders still waiting for records of these splits."""
        self._buffer.stop_reading([split.log for split in self._splits])
        for split in self._splits:
            split.log.fail_tickets(partial(self._not_committed, split.log))

    def _read_positions(self) -> dict[str, int]:
        # Where each split's reading stands; past the last batch returned only by duplicates.
        return {split.log.split_id: split.log.read for split in self._splits}

    def _take(self, max_records: int) -> list[T] | None:
        # None: nothing unread in any split; []: only duplicates were read.
        count = len(self._splits)
        for turn in range(self._turn, self._turn + count):
            split = self._splits[turn % count]
            if split.log.unread:
                self._turn = (turn + 1) % count
                records = split.take(max_records, self._context.clock.now())
                if not self._context.checkpointing:
                    split.log.release_to(split.log.read)
                self._buffer.changed.notify()
                return records
        return None

    def _not_committed(self, log: IngressLog[T]) -> IngressNotCommitted:
        context = self._context
        return IngressNotCommitted(
            f"ingress '{context.uid}' (split '{log.split_id}', subtask "
            f"{context.subtask_index + 1}/{context.parallelism}): the job's attempt ended "
            "(it failed, restarted, stopped or was cancelled) before a completed checkpoint "
            "covered the record; the record is still held, so a restarted attempt may yet "
            "reflect it: send it again with the same idempotency_key to have it counted "
            "once, or answer your client with an error"
        )

    def __repr__(self) -> str:
        splits = ", ".join(repr(split.log) for split in self._splits)
        return f"<IngressReader '{self._context.uid}' [{splits}]>"
