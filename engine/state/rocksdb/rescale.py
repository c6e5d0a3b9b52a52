"""rescale_files: RocksDB checkpoints' files made into one subtask's database at a new parallelism.

Flink's ``RocksDBIncrementalRestoreOperation`` when the parallelism changed: of the old
subtasks whose key groups overlap the new subtask's range, the one with the largest overlap
is the base. Its files, downloaded, are opened as they are; the key groups outside the new
range are deleted with two range deletions (``delete_range``: tombstones, no value read;
when scaling out, by the store as it opens them); then the entries of the range that the
other old subtasks held are copied in, read from their files (opened read-only) in one
ordered scan each and written in batches, as stored bytes: no value is unpickled, no key
decoded. So a restore at another parallelism reads and writes only the key groups that
changed subtask, never the base's.

State ids are private to each database: the others' ids are mapped to the base's by state
name, and a state the base lacks gets a new id. States with a TTL hold deadlines of the old
clock: as a restore from key groups does, the values that had expired when each checkpoint
was taken are left out, and the others lose their deadline (they live a full ``ttl`` from
the restore). The description returned says so (its clock times are equal), so that
``restore_native`` keeps every value as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rocksdict import AccessType, Options, Rdict, WriteBatch

from lockgate.engine.state.rocksdb.checkpoint import formats_in
from lockgate.engine.state.rocksdb.database import scan
from lockgate.engine.state.rocksdb.keys import state_id_bytes
from lockgate.engine.state.rocksdb.restore import RestoredFiles, keep_only
from lockgate.engine.state.rocksdb.snapshot import StateFormat
from lockgate.engine.state.rocksdb.values import plain, split

__all__ = ["FormatConflict", "formats_agree", "rescale_files"]

_BATCH_ENTRIES = 65_536
_WHOLE_VALUE_KINDS = (None, "value", "reducing", "aggregating")  # one pickled value per key

Source = tuple[Path, Mapping[str, Any]]
"""The folder of a RocksDB checkpoint's downloaded files, and its description."""


class FormatConflict(ValueError):
    """Two old subtasks stored one state in different layouts: their entries cannot merge."""


def formats_agree(descriptions: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the files ``descriptions`` describe store each state in one layout.

    A state restored but not declared yet (kind unknown) holds one pickled value per key,
    as value, reducing and aggregating state do; a list or a map holds its own layout. TTLs
    may differ: the files' deadlines are dropped when they merge.
    """
    seen: dict[str, StateFormat] = {}
    for description in descriptions:
        for state in formats_in(description).values():
            known = seen.get(state.name)
            merged = state if known is None else _merged(known, state)
            if merged is None:
                return False
            seen[state.name] = merged
    return True


def rescale_files(
    base: Source, others: Sequence[Source], key_groups: range, max_parallelism: int
) -> dict[str, Any]:
    """Make the files in ``base``'s folder hold exactly ``key_groups`` of every source.

    ``base`` holds the files of the old subtask with the largest overlap; ``others`` those of
    the other old subtasks whose key groups overlap ``key_groups``. Without others (scaling
    out) the files are left as they are and the description returned names the key groups
    to keep: the store deletes the others when it opens them (``RestoredFiles.keep_only``).
    Otherwise the base's database is opened here, the other key groups deleted and each
    entry of ``key_groups`` in the others' files copied in, as stored (the ids mapped); the
    others' folders are only read. Returns the description of the base's files then.

    Raises:
        ValueError: a description this lockgate does not write, or of another max parallelism.
        FormatConflict: one state stored in two layouts (``formats_agree`` tells first).
    """
    folder, description = base
    files = RestoredFiles.described(description, max_parallelism)
    if not others:
        return {**description, "key_groups": [key_groups.start, key_groups.stop]}
    formats = dict(files.formats)
    db = Rdict(str(folder), Options(raw_mode=True))
    try:
        keep_only(db, key_groups, max_parallelism)
        files.restart_deadlines(db, max_parallelism)
        for other in others:
            _insert(db, other, key_groups, formats, max_parallelism)
        db.flush()
    finally:
        db.close()
    return _described(description, formats)


def _insert(
    db: Rdict,
    source: Source,
    key_groups: range,
    formats: dict[bytes, StateFormat],
    max_parallelism: int,
) -> None:
    """Copy ``source``'s entries of ``key_groups`` into ``db``, its state ids mapped."""
    folder, description = source
    times = RestoredFiles.described(description, max_parallelism)
    ids = _mapped_ids(formats_in(description), formats)
    other = Rdict(str(folder), Options(raw_mode=True), access_type=AccessType.read_only())
    try:
        entries = scan(other, _group(key_groups.start), _group(key_groups.stop))
        if all(theirs == ours and ttl is None for theirs, (ours, ttl) in ids.items()):
            _copy(db, entries)  # the same ids and no deadlines: every entry as it is stored
        else:
            mapped = (_mapped(db_key, stored, ids, times) for db_key, stored in entries)
            _copy(db, (entry for entry in mapped if entry is not None))
    finally:
        other.close()


def _copy(db: Rdict, entries: Iterable[tuple[bytes, bytes]]) -> None:
    batch, count = WriteBatch(raw_mode=True), 0
    put = batch.put
    for db_key, stored in entries:
        put(db_key, stored)
        count += 1
        if count == _BATCH_ENTRIES:
            db.write(batch)
            batch, count = WriteBatch(raw_mode=True), 0
            put = batch.put
    if count:
        db.write(batch)


_Mapping = dict[bytes, tuple[bytes, float | None]]
"""A source's state id -> the base's id for it, and the state's TTL seconds (or ``None``)."""


def _mapped_ids(theirs: Mapping[bytes, StateFormat], formats: dict[bytes, StateFormat]) -> _Mapping:
    """Map each state id of a source to the base's, adding to ``formats`` the states it lacks."""
    by_name = {state.name: state_id for state_id, state in formats.items()}
    mapped: _Mapping = {}
    for their_id, state in theirs.items():
        ours = by_name.get(state.name)
        if ours is None:
            ours = by_name[state.name] = _next_id(formats)
            formats[ours] = state
        else:
            merged = _merged(formats[ours], state)
            if merged is None:
                raise FormatConflict(
                    f"state '{state.name}' is stored as {formats[ours]} by one old subtask "
                    f"and as {state} by another; restore it from key groups"
                )
            formats[ours] = merged
        mapped[their_id] = (ours, state.ttl)
    return mapped


def _merged(ours: StateFormat, theirs: StateFormat) -> StateFormat | None:
    """The format of a state two sources store as ``ours`` and ``theirs``; ``None``: a conflict."""
    if ours.kind != theirs.kind and not {ours.kind, theirs.kind} <= set(_WHOLE_VALUE_KINDS):
        return None
    kind = ours.kind or theirs.kind
    return StateFormat(ours.name, kind, ours.ttl if ours.ttl is not None else theirs.ttl)


def _mapped(
    db_key: bytes, stored: bytes, ids: _Mapping, times: RestoredFiles
) -> tuple[bytes, bytes] | None:
    """Return the entry as the base stores it, or ``None`` (an unknown state, or expired)."""
    found = ids.get(db_key[2:4])
    if found is None:  # entries of no listed state: none are left behind by a reshape
        return None
    state_id, ttl = found
    if ttl is not None:
        deadline, payload = split(stored)
        if (times.restored_at + ttl if deadline is None else deadline) <= times.time:
            return None
        stored = plain(payload)
    return db_key[:2] + state_id + db_key[4:], stored


def _next_id(formats: Mapping[bytes, StateFormat]) -> bytes:
    highest = max((int.from_bytes(state_id, "big") for state_id in formats), default=0)
    return state_id_bytes(highest + 1)


def _described(
    description: Mapping[str, Any], formats: Mapping[bytes, StateFormat]
) -> dict[str, Any]:
    # The TTL states' values hold no deadline now: equal times keep every one of them.
    return {
        **description,
        "formats": {
            int.from_bytes(state_id, "big"): (state.name, state.kind, state.ttl)
            for state_id, state in formats.items()
        },
        "restored_at": description["time"],
    }


def _group(group: int) -> bytes:
    return group.to_bytes(2, "big")
