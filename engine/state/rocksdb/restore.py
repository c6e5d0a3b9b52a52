"""RestoredFiles: a RocksDB checkpoint's files opened as a store's database, no value rewritten.

At an unchanged key-group range (the same parallelism and max parallelism), a subtask restores
an incremental RocksDB checkpoint as Flink does: the checkpoint's files, downloaded into a
folder, become the new store's database, and no value is read back or written again. What the
files do not tell is in the checkpoint's description (``RocksDBCheckpointSnapshot.description``):
state id -> name, kind and TTL, the max parallelism of the keys' groups, and clock times.

States with a TTL are the exception. Their deadlines are times of the old job's clock, which is
monotonic and means nothing to the new one, so their values get what a restore from key groups
gives them: those expired when the snapshot was taken are deleted, the others lose their
deadline and live a full ``ttl`` from this restore (``restart_deadlines``). That rewrites the
entries of the states with a TTL, and only theirs.

A restore at another parallelism may hand a subtask the files of an old subtask whose key
groups are a superset of its own (scaling out): the description then names the key groups
to keep (``"key_groups"``), and ``keep_only`` deletes the others with two range deletions,
as Flink's RocksDB backend does: tombstones, no value read or written.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rocksdict import Rdict, WriteBatch

from lockgate.engine.state.rocksdb.checkpoint import check_description, formats_in
from lockgate.engine.state.rocksdb.database import scan
from lockgate.engine.state.rocksdb.keys import prefix_end
from lockgate.engine.state.rocksdb.snapshot import StateFormat
from lockgate.engine.state.rocksdb.values import plain, split

__all__ = ["RestoredFiles", "keep_only"]

_BATCH_ENTRIES = 4_096


@dataclass(frozen=True, slots=True)
class RestoredFiles:
    """What a store needs besides a RocksDB checkpoint's files to take them as its database.

    ``formats`` maps each state id the files use to its state's format; ``time`` is the old
    store's clock time when the checkpoint was taken, ``restored_at`` that of its own last
    restore (values stored without a deadline expire ``ttl`` after it).
    """

    formats: dict[bytes, StateFormat]
    time: float
    restored_at: float
    key_groups: range | None = None

    @classmethod
    def described(cls, description: Mapping[str, Any], max_parallelism: int) -> RestoredFiles:
        """Return what ``description`` tells of files for a store of ``max_parallelism``.

        Raises:
            ValueError: a description in another format, or of keys grouped by another max
                parallelism (the files' keys begin with their key group).
        """
        check_description(description)
        if description["max_parallelism"] != max_parallelism:
            raise ValueError(
                f"the RocksDB files group keys by max parallelism "
                f"{description['max_parallelism']}, the store by {max_parallelism}; "
                "restore them from key groups instead"
            )
        kept = description.get("key_groups")
        key_groups = None if kept is None else range(*kept)
        times = (description["time"], description["restored_at"])
        return cls(formats_in(description), *times, key_groups)

    @property
    def last_id(self) -> int:
        """The highest state id the files use (0 if none).

        No entry lies under a higher one: a state reshaped into a new id moved its entries
        there, and the new id is higher than the old one and listed.
        """
        return max((int.from_bytes(state_id, "big") for state_id in self.formats), default=0)

    def keep_only(self, db: Rdict, max_parallelism: int) -> None:
        """Delete every entry outside ``key_groups`` (keys begin with their key group)."""
        if self.key_groups is not None:
            keep_only(db, self.key_groups, max_parallelism)

    def restart_deadlines(self, db: Rdict, max_parallelism: int) -> None:
        """Delete what had expired in the states with a TTL; store the rest without a deadline."""
        batch = WriteBatch(raw_mode=True)
        for db_key, stored, ttl in self._entries_with_ttl(db, max_parallelism):
            deadline, payload = split(stored)
            if (self.restored_at + ttl if deadline is None else deadline) <= self.time:
                batch.delete(db_key)
            elif deadline is not None:
                batch.put(db_key, plain(payload))
            if len(batch) >= _BATCH_ENTRIES:
                db.write(batch)
                batch = WriteBatch(raw_mode=True)
        if len(batch):
            db.write(batch)

    def _entries_with_ttl(
        self, db: Rdict, max_parallelism: int
    ) -> Iterator[tuple[bytes, bytes, float]]:
        # One ordered range per key group and state: the other states' entries are not read.
        for state_id, state in self.formats.items():
            if state.ttl is None:
                continue
            for group in range(max_parallelism):
                prefix = group.to_bytes(2, "big") + state_id
                for db_key, stored in scan(db, prefix, prefix_end(prefix)):
                    yield db_key, stored, state.ttl

    def __repr__(self) -> str:
        names = sorted(state.name for state in self.formats.values())
        return f"<RestoredFiles states={names} time={self.time}>"


def keep_only(db: Rdict, key_groups: range, max_parallelism: int) -> None:
    """Delete every entry of ``db`` outside ``key_groups``: two range deletions at most."""
    if key_groups.start > 0:
        db.delete_range(_group(0), _group(key_groups.start))
    if key_groups.stop < max_parallelism:
        db.delete_range(_group(key_groups.stop), _group(max_parallelism))


def _group(group: int) -> bytes:
    return group.to_bytes(2, "big")
