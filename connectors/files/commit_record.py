"""CommitRecord: which part files of one FileSink writer were committed, kept beside them."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from pathlib import Path

__all__ = ["CommitRecord", "merged_ranges"]

_COMPACT_AT = 4096  # bytes: a record this long is rewritten as its merged ranges


class CommitRecord:
    """The part numbers of one writer that were committed, as ranges ``first last``, a line each.

    A committed part file is the readers' to move away, so a restored transaction whose
    files are gone was committed if the record covers its parts, and lost if not. Lines are
    appended (``O_APPEND``) and synced after the parts are renamed: writers in several
    processes may record commits of one writer's transactions at once, and a part is never
    recorded before it is visible. A torn last line of a killed process is skipped, which can
    make a committed part look lost, never a lost one look committed. Only the writer whose
    record it is compacts it (``add(..., compact=True)``); a line another process appends
    meanwhile may be dropped, which is harmless, since the record's writer, running,
    commits and records each of its transactions itself.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, parts: Iterable[int], *, compact: bool = False) -> None:
        """Record ``parts`` as committed, durably; blocking."""
        lines = "".join(f"{first} {last}\n" for first, last in merged_ranges((p, p) for p in parts))
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, lines.encode())
            os.fsync(descriptor)
            size = os.fstat(descriptor).st_size
        finally:
            os.close(descriptor)
        if compact and size >= _COMPACT_AT:
            self._rewrite()

    def covers(self, part: int) -> bool:
        """Whether part ``part`` was recorded as committed; blocking."""
        return any(first <= part <= last for first, last in self.ranges())

    def ranges(self) -> list[tuple[int, int]]:
        """The recorded ranges, merged; none if there is no record."""
        try:
            text = self.path.read_text("ascii", errors="replace")
        except FileNotFoundError:
            return []
        return merged_ranges(parsed for line in text.splitlines() if (parsed := _parsed(line)))

    def remove(self) -> None:
        """Delete the record: no restorable transaction of its writer needs it any more."""
        self.path.unlink(missing_ok=True)

    def _rewrite(self) -> None:
        staging = self.path.with_name(f"{self.path.name}.{secrets.token_hex(4)}")
        with open(staging, "x", encoding="ascii") as file:
            file.writelines(f"{first} {last}\n" for first, last in self.ranges())
            file.flush()
            os.fsync(file.fileno())
        os.rename(staging, self.path)

    def __repr__(self) -> str:
        return f"<CommitRecord '{self.path.name}'>"


def merged_ranges(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted ranges with overlapping and adjacent ones joined: ``(0, 2), (3, 4)`` is ``(0, 4)``."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return merged


def _parsed(line: str) -> tuple[int, int] | None:
    fields = line.split(" ")
    if len(fields) != 2 or not all(field.isdigit() for field in fields):
        return None
    first, last = int(fields[0]), int(fields[1])
    return (first, last) if first <= last else None
