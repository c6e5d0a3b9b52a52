"""RocksDBOptions: how the RocksDB state backend tunes its databases and their key cache.

Flink's ``state.backend.rocksdb.compaction.style`` and the level-0 compaction trigger, and
the size of the write-back cache of hot keys in front of each database, as one validated
value that every database of a ``RocksDBStateBackend`` is opened with. This module does not
import rocksdict (the backend is an extra): ``rocksdb.database`` applies the options to
RocksDB's own, ``rocksdb.cache`` keeps the cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["CACHE_ENTRIES", "CompactionStyle", "RocksDBOptions"]

CompactionStyle = Literal["level", "universal"]
"""RocksDB's compaction styles that keep every entry (FIFO drops the oldest files)."""

_STYLES: tuple[str, ...] = get_args(CompactionStyle)
_ACCEPTED_STYLES = " or ".join(repr(style) for style in _STYLES)
_LEVEL0_TRIGGER = 4  # RocksDB's default
CACHE_ENTRIES = 20_000
"""The default bound of each keyed operator subtask's write-back cache, in entries."""
# RocksDB slows writes at 20 level-0 files and stops them at 36 by default; a higher trigger
# keeps that headroom above it, so that writes never stall before a compaction could start.
_SLOWDOWN_WRITES = 20
_STOP_WRITES = 36


@dataclass(frozen=True, slots=True)
class RocksDBOptions:
    """The tuning of a RocksDB state backend's databases (RocksDB's compaction by default).

    Invariant: the values are valid when the object exists (the constructor raises
    ``ValueError`` otherwise), so a job fails when it is configured, not when an operator
    opens its database.

    Attributes:
        compaction_style: ``"level"`` (RocksDB's and Flink's default) or ``"universal"``.
            Level compaction merges level-0 files into a sorted level, rewriting every file
            of that level they overlap; universal compaction merges whole sorted runs of
            similar size, rewriting less but keeping more versions of a key on disk.
        level0_compaction_trigger: How many level-0 files (universal: sorted runs) start a
            compaction; RocksDB's ``level0_file_num_compaction_trigger``. Each checkpoint
            of an incremental job flushes the memtable into a level-0 file, so with level
            compaction this is about how many checkpoints pass between the compactions
            that rewrite (and re-upload) the level below; each read may look at that many
            files more. The write slowdown and stop triggers move up with it.
        cache_entries: How many entries (a key's value, list or accumulator; a map's user
            key) each keyed operator subtask keeps in its write-back cache in front of
            RocksDB, at least 1 (``CACHE_ENTRIES`` by default). Cached values are kept as
            Python objects; changes are written to RocksDB in one batch when an entry is
            evicted and before every snapshot, so the cache bounds the memory state uses,
            whatever the size of the state on disk.
    """

    compaction_style: CompactionStyle = "level"
    level0_compaction_trigger: int = _LEVEL0_TRIGGER
    cache_entries: int = CACHE_ENTRIES

    def __post_init__(self) -> None:
        _check_style(self.compaction_style)
        _check_trigger(self.level0_compaction_trigger)
        _check_cache(self.cache_entries)

    @property
    def level0_slowdown_writes_trigger(self) -> int:
        """How many level-0 files slow writes down: RocksDB's 20, or 16 above the trigger."""
        return max(_SLOWDOWN_WRITES, self._above_trigger(_SLOWDOWN_WRITES))

    @property
    def level0_stop_writes_trigger(self) -> int:
        """How many level-0 files stop writes: RocksDB's 36, or 32 above the trigger."""
        return max(_STOP_WRITES, self._above_trigger(_STOP_WRITES))

    def _above_trigger(self, default: int) -> int:
        """``default`` moved up by as much as the trigger is above RocksDB's default."""
        return default + self.level0_compaction_trigger - _LEVEL0_TRIGGER


def _check_style(style: object) -> None:
    if style == "fifo":
        raise ValueError(
            "compaction_style 'fifo' deletes the oldest files, and keyed state with them; "
            f"use {_ACCEPTED_STYLES}"
        )
    if style not in _STYLES:
        raise ValueError(f"unknown compaction_style {style!r}; use {_ACCEPTED_STYLES}")


def _check_trigger(trigger: object) -> None:
    if not isinstance(trigger, int) or isinstance(trigger, bool) or trigger < 1:
        raise ValueError(
            f"level0_compaction_trigger must be a whole number of files, at least 1; got "
            f"{trigger!r} (RocksDB's default is {_LEVEL0_TRIGGER})"
        )


def _check_cache(entries: object) -> None:
    if not isinstance(entries, int) or isinstance(entries, bool) or entries < 1:
        raise ValueError(
            f"cache_entries must be a whole number of entries, at least 1; got {entries!r} "
            f"(the default is {CACHE_ENTRIES:,})"
        )
