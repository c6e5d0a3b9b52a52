"""RocksDBKeyedStateSnapshot: a RocksDB snapshot of keyed state, turned into plain data later."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rocksdict import RdictIter

from lockgate.engine.state.key_groups import key_group_for
from lockgate.engine.state.rocksdb.database import Entry, scan_view
from lockgate.engine.state.rocksdb.frozen import FrozenWrites
from lockgate.engine.state.rocksdb.keys import decode_key, prefix_end, unframe
from lockgate.engine.state.rocksdb.values import load, load_items, split

__all__ = ["RocksDBKeyedStateSnapshot", "StateFormat"]

KeyGroups = dict[int, dict[str, dict[Any, Any]]]

_KEY_START = 4  # key group (2 bytes) and state id (2 bytes)


@dataclass(frozen=True, slots=True)
class StateFormat:
    """How the entries of one state are stored: its name, kind (if known) and TTL seconds.

    A state restored before any declaration named its kind has ``kind`` ``None``: its
    entries hold whole pickled values.
    """

    name: str
    kind: str | None
    ttl: float | None = None

    def export(self, payload: bytes) -> Any:
        """Return the plain value of a stored payload (a list of its items for a list)."""
        return load_items(payload) if self.kind == "list" else load(payload)


class RocksDBKeyedStateSnapshot:
    """The keyed state of one subtask as it was when ``RocksDBKeyedStateStore.snapshot`` returned.

    Invariant: it never changes. It reads through a RocksDB iterator that sees the database
    as it was at ``snapshot`` (its memtables and files stay alive while the snapshot does),
    so ``by_key_group`` may run in a worker thread while the event loop keeps writing to the
    store; values come out as new objects. One thread at a time may use it. Taken by a
    store, it gets the iterator when its window (``frozen``) closes: the first read closes
    it, writing back what only the cache held at ``snapshot`` first (``rocksdb.frozen``).
    Values of states with a TTL that had expired at the clock time of the snapshot are left
    out; values restored without a deadline expire ``ttl`` after the restore. ``entries`` is
    RocksDB's estimate (a map counts one entry per user key).
    """

    __slots__ = (
        "_formats",
        "_frozen",
        "_max_parallelism",
        "_restored_at",
        "_source",
        "_time",
        "entries",
        "kinds",
    )

    def __init__(
        self,
        source: RdictIter | None,
        formats: Mapping[bytes, StateFormat],
        *,
        max_parallelism: int,
        kinds: Mapping[str, str],
        entries: int = 0,
        times: tuple[float, float] = (0.0, 0.0),
        frozen: FrozenWrites[RdictIter | None] | None = None,
    ) -> None:
        """Wrap ``source`` (``None`` for a store that never opened its database).

        ``formats`` maps a state id to its format; ``times`` is the clock time of the
        snapshot and of the last restore; ``max_parallelism`` made the stored key groups;
        ``frozen``, if given, captures the source when it closes (``source`` is ignored).
        """
        self._source = source
        self._frozen = frozen
        self._formats = dict(formats)
        self._max_parallelism = max_parallelism
        self._time, self._restored_at = times
        self.kinds = dict(kinds)
        self.entries = entries

    @property
    def state_names(self) -> frozenset[str]:
        """The names of the states that hold at least one entry (one seek per key group)."""
        return frozenset(
            self._formats[state_id].name
            for state_id in self._formats
            if any(self._has_entries(group, state_id) for group in range(self._max_parallelism))
        )

    def by_key_group(self, max_parallelism: int) -> KeyGroups:
        """Return key group -> state name -> key -> plain value, as ``KeyedStateSnapshot`` does.

        Lists and maps come out as new ``list`` and ``dict`` objects, aggregating state as
        its accumulator. Keys are the built-in values the stored keys equal (see
        ``rocksdb_keys``). A ``max_parallelism`` other than the store's regroups every key.
        """
        if max_parallelism < 1:
            raise ValueError(f"max_parallelism must be at least 1; got {max_parallelism}")
        groups: KeyGroups = {}
        for group, state, key, entry in self._plain_entries():
            if max_parallelism != self._max_parallelism:
                group = key_group_for(key, max_parallelism)
            table = groups.setdefault(group, {}).setdefault(state.name, {})
            if state.kind == "map":
                user_key, value = entry
                table.setdefault(key, {})[user_key] = value
            else:
                table[key] = entry
        return groups

    def _plain_entries(self) -> Iterator[tuple[int, StateFormat, Any, Any]]:
        """Yield (key group, state, key, value) per live entry; a map's value is a pair."""
        last: tuple[bytes, Any] = (b"", None)
        for db_key, stored in self._scan(None, None):
            state = self._formats.get(db_key[2:_KEY_START])
            payload = None if state is None else self._live(state, stored)
            if state is None or payload is None:
                continue
            encoded, end = unframe(db_key, _KEY_START)
            if encoded != last[0]:
                last = (encoded, decode_key(encoded))
            group = int.from_bytes(db_key[:2], "big")
            if state.kind == "map":
                yield group, state, last[1], (decode_key(db_key[end:]), load(payload))
            else:
                yield group, state, last[1], state.export(payload)

    def _live(self, state: StateFormat, stored: bytes) -> bytes | None:
        deadline, payload = split(stored)
        if state.ttl is None:
            return payload
        if deadline is None:
            deadline = self._restored_at + state.ttl
        return payload if deadline > self._time else None

    def _has_entries(self, group: int, state_id: bytes) -> bool:
        prefix = group.to_bytes(2, "big") + state_id
        return next(self._scan(prefix, prefix_end(prefix)), None) is not None

    def _scan(self, start: bytes | None, end: bytes | None) -> Iterator[Entry]:
        if self._frozen is not None:
            self._source, self._frozen = self._frozen.close(), None
        return iter(()) if self._source is None else scan_view(self._source, start, end)

    def __repr__(self) -> str:
        names = sorted(state.name for state in self._formats.values())
        return f"<RocksDBKeyedStateSnapshot states={names} entries~{self.entries}>"
