"""Part files of a FileSink: their names, their transactions, and the files one writer owns.

The blocking file work of ``FileSink`` lives here, for worker threads; the sink and its
writer (``sink.py``) decide when it runs.
"""

from __future__ import annotations

import os
import re
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal, TypeAlias

import orjson

from lockgate.connectors.errors import UnencodableRecord
from lockgate.connectors.files.commit_record import CommitRecord
from lockgate.connectors.files.writer_id import WriterId
from lockgate.connectors.files.writer_lock import WriterLock, is_held
from lockgate.engine.io.sinks import SinkContext

__all__ = [
    "FileTransaction",
    "PartFiles",
    "PartName",
    "PartState",
    "RollingPolicy",
    "file_name_safe",
    "fsync_directory",
    "listed",
    "new_fence",
]

PartState: TypeAlias = Literal["inprogress", "pending"]


@dataclass(frozen=True, slots=True)
class RollingPolicy:
    """When a ``FileSink`` subtask closes its part file and starts the next one.

    A part file rolls before a line that would take it past ``max_part_bytes`` (a single
    longer line gets a part file of its own), before records that arrive once it is
    ``max_part_age`` seconds old on the job's clock, and always at a checkpoint, so that a
    transaction holds whole files. ``None`` lifts a limit.
    """

    max_part_bytes: int | None = 128 * 1024 * 1024
    max_part_age: float | None = None

    def __post_init__(self) -> None:
        if self.max_part_bytes is not None and self.max_part_bytes < 1:
            raise ValueError(f"max_part_bytes must be at least 1; got {self.max_part_bytes}")
        if self.max_part_age is not None and not self.max_part_age > 0:
            raise ValueError(f"max_part_age must be more than 0 seconds; got {self.max_part_age}")

    def rolls(self, size: int, line: int, age: float) -> bool:
        """Whether a part of ``size`` bytes, ``age`` seconds old, rolls before a ``line``."""
        too_big = self.max_part_bytes is not None and size + line > self.max_part_bytes
        too_old = self.max_part_age is not None and age >= self.max_part_age
        return size > 0 and (too_big or too_old)


@dataclass(slots=True)
class FileTransaction:
    """The part files one ``FileSink`` subtask wrote between two checkpoints: plain data.

    Part ``n`` is ``.<stem>-<n><ext>.inprogress`` while written, ``.<stem>-<n><ext>.pending``
    once pre-committed and ``<stem>-<n><ext>`` once committed, where ``<stem>`` is
    ``part-<uid>-<subtask>-<fence>``. Checkpoints store it, so it holds names, never files.
    ``inherited`` names (``WriterId.token``) the ended writers whose leftovers its writer had
    not removed yet when it began it: whoever restores it removes them, so a writer killed
    before its cleanup passes that duty on.
    """

    directory: str
    uid: str
    subtask: int
    fence: str
    extension: str
    parts: list[int] = field(default_factory=list)
    inherited: list[str] = field(default_factory=list)

    def final_path(self, part: int) -> Path:
        """Where part ``part`` is visible once committed."""
        return Path(self.directory, f"{self._stem(part)}{self.extension}")

    def hidden_path(self, part: int, state: PartState) -> Path:
        """Where part ``part`` is while ``"inprogress"`` or ``"pending"``."""
        return Path(self.directory, f".{self._stem(part)}{self.extension}.{state}")

    @property
    def writer(self) -> WriterId:
        """The writer that began this transaction."""
        return WriterId(self.uid, self.subtask, self.fence)

    @property
    def inherited_writers(self) -> list[WriterId]:
        """The ended writers whose leftovers are still to be removed (see the class)."""
        return [WriterId.of_token(self.uid, token) for token in self.inherited]

    @property
    def record(self) -> CommitRecord:
        """The commit record of the writer that began this transaction."""
        return CommitRecord(self.writer.path(Path(self.directory), "committed"))

    def _stem(self, part: int) -> str:
        return f"part-{self.uid}-{self.subtask}-{self.fence}-{part}"


_PART_NAME = re.compile(
    r"(?P<hidden>\.)?part-(?P<uid>.+)-(?P<subtask>\d+)-(?P<fence>[0-9a-f]{12})-(?P<part>\d+)"
    r"(?P<extension>\.txt|\.jsonl)(?:\.(?P<state>inprogress|pending))?"
)


@dataclass(frozen=True, slots=True)
class PartName:
    """A part file's name, taken apart."""

    file_name: str
    uid: str
    subtask: int
    fence: str
    part: int
    extension: str
    state: str | None

    @classmethod
    def parse(cls, name: str) -> PartName | None:
        """Take ``name`` apart, or return ``None`` if it is not a part file's name."""
        match = _PART_NAME.fullmatch(name)
        if match is None or bool(match["hidden"]) != bool(match["state"]):
            return None
        return cls(
            name,
            match["uid"],
            int(match["subtask"]),
            match["fence"],
            int(match["part"]),
            match["extension"],
            match["state"],
        )

    @property
    def writer(self) -> WriterId:
        """The writer that made this part file."""
        return WriterId(self.uid, self.subtask, self.fence)

    @property
    def order(self) -> tuple[str, int, str, int]:
        """Sort key: operator, subtask, fence, part number."""
        return (self.uid, self.subtask, self.fence, self.part)

    def is_visible(self, extension: str) -> bool:
        """Whether this is a committed part file with ``extension``."""
        return self.state is None and self.extension == extension


class PartFiles:
    """The part files of one sink subtask's writer; blocking methods, for worker threads.

    At most one part file is open: the last one of the open transaction. Between ``start``
    and ``stop`` the writer holds its ``WriterLock``; it removes hidden files of other
    writers only once their locks are free, so it never touches a running writer's files,
    in this job or in another one writing to the same directory.
    """

    def __init__(
        self,
        directory: Path,
        context: SinkContext,
        extension: str,
        encode: Callable[[list[Any]], list[bytes]],
        rolling: RollingPolicy,
    ) -> None:
        self.directory = directory
        self.uid = file_name_safe(context.uid)
        self.context = context
        self.clock = context.clock
        self.extension = extension
        self.fence = ""
        self._encode = encode
        self._rolling = rolling
        self._next_part = 0
        self._file: BinaryIO | None = None
        self._size = 0
        self._opened_at = 0.0
        self._lock: WriterLock | None = None
        self._inherited: list[str] = []

    @property
    def key(self) -> tuple[str, int]:
        """The writer's identity: file-name-safe uid and subtask index."""
        return (self.uid, self.context.subtask_index)

    @property
    def writer(self) -> WriterId:
        """This writer: its file-name-safe uid, subtask index and fence."""
        return WriterId(self.uid, self.context.subtask_index, self.fence)

    def start(self, restored: Iterable[WriterId] = ()) -> frozenset[WriterId]:
        """Lock a fence no file uses, remove ended writers' in-progress files; return predecessors.

        Creates the directory. The writers whose transactions this subtask restored and that
        have ended are its predecessors, whose leftovers it removes once a checkpoint
        completes (``remove_leftovers_of``); a restored writer still running is another job's
        (one started from a savepoint of it), and keeps its files.
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        used = {writer.fence for writer in self._hidden_files() if writer.uid == self.uid}
        used |= {name.fence for name in self._part_names() if name.uid == self.uid}
        self.fence = new_fence(used)
        self._lock = WriterLock.acquire(self.writer.path(self.directory, "lock"))
        self.remove_ended_in_progress()
        predecessors = frozenset(writer for writer in restored if not self._is_running(writer))
        self._inherited = sorted(writer.token for writer in predecessors)
        return predecessors

    def stop(self, *, finished: bool) -> None:
        """Release the lock; once ``finished`` (all committed) drop the commit record too.

        A writer that ended with every transaction committed leaves no hidden file; one that
        failed leaves its record for the writers that restore its transactions.
        """
        if finished:
            CommitRecord(self.writer.path(self.directory, "committed")).remove()
        if self._lock is not None:
            self._lock.release()

    def owns(self, txn: FileTransaction) -> bool:
        """Whether ``txn`` was begun by this writer in this attempt."""
        return (txn.uid, txn.subtask, txn.fence) == (*self.key, self.fence)

    def begin(self) -> FileTransaction:
        """Return a new, empty transaction of this writer."""
        return FileTransaction(
            str(self.directory),
            self.uid,
            self.context.subtask_index,
            self.fence,
            self.extension,
            inherited=list(self._inherited),
        )

    def encoded(self, records: list[Any]) -> list[bytes]:
        """Return the records as lines of bytes, or raise ``UnencodableRecord``."""
        try:
            return self._encode(records)
        except orjson.JSONEncodeError as error:
            raise UnencodableRecord(
                f"file sink {self._where()} cannot write a record as JSON: {error}; map records "
                "to dicts, lists, str, numbers, bool or None first, or use format='text'"
            ) from error

    def write(self, txn: FileTransaction, lines: list[bytes], now: float) -> None:
        """Append ``lines`` to the open part, rolling before a line the policy says to."""
        chunk: list[bytes] = []
        for line in lines:
            if self._file is not None and self._rolling.rolls(
                self._size, len(line), now - self._opened_at
            ):
                self._append(chunk)
                chunk = []
                self._close(sync=True)
            if self._file is None:
                self._open_part(txn, now)
            chunk.append(line)
            self._size += len(line)
        self._append(chunk)

    def seal(self, txn: FileTransaction) -> None:
        """Fsync the open part and rename every part of ``txn`` to pending."""
        self._close(sync=True)
        for part in txn.parts:
            os.rename(txn.hidden_path(part, "inprogress"), txn.hidden_path(part, "pending"))
        if txn.parts:
            fsync_directory(self.directory)

    def discard(self) -> None:
        """Close the open part without syncing it: it is about to be deleted."""
        self._close(sync=False)

    def remove_ended_in_progress(self) -> None:
        """Delete the in-progress files and lock files of ended writers of this subtask's index.

        An in-progress file is of use to its own writer only, and is never committed; the
        last subtask also owns the indices beyond the parallelism.
        """
        for writer, names in self._hidden_files().items():
            if self._owns_index(writer) and not self._is_running(writer):
                self._unlink(name for name in names if name.endswith(".inprogress"))
                writer.path(self.directory, "lock").unlink(missing_ok=True)

    def remove_leftovers_of(self, writers: Iterable[WriterId]) -> None:
        """Delete every hidden file of the ended ``writers``: in-progress, pending, record, lock.

        For this subtask's predecessors (``start``), once a checkpoint of this attempt
        completed: every subtask has then committed the pending transactions it restored, so
        the pending files left were pre-committed after the restored checkpoint, by an
        attempt this one replaces.
        """
        files = self._hidden_files()
        for writer in set(writers) - {self.writer}:
            names = files.get(writer, [])
            self._unlink(name for name in names if not name.endswith(".lock"))
            writer.path(self.directory, "lock").unlink(missing_ok=True)
        self._inherited = []

    def _is_running(self, writer: WriterId) -> bool:
        return writer == self.writer or is_held(writer.path(self.directory, "lock"))

    def _owns_index(self, writer: WriterId) -> bool:
        index, parallelism = self.context.subtask_index, self.context.parallelism
        beyond = index == parallelism - 1 and writer.subtask >= parallelism
        return writer.uid == self.uid and (writer.subtask == index or beyond)

    def _hidden_files(self) -> dict[WriterId, list[str]]:
        files: dict[WriterId, list[str]] = defaultdict(list)
        for name in listed(self.directory):
            part = PartName.parse(name)
            found = (part.writer, part.state) if part else WriterId.of_file(name)
            if found is not None and found[1] is not None:
                files[found[0]].append(name)
        return files

    def _unlink(self, names: Iterable[str]) -> None:
        for name in names:
            (self.directory / name).unlink(missing_ok=True)

    def _part_names(self) -> list[PartName]:
        return [parsed for name in listed(self.directory) if (parsed := PartName.parse(name))]

    def _open_part(self, txn: FileTransaction, now: float) -> None:
        part, self._next_part = self._next_part, self._next_part + 1
        txn.parts.append(part)
        self._file = open(txn.hidden_path(part, "inprogress"), "xb")  # noqa: SIM115 - _close
        self._size = 0
        self._opened_at = now

    def _append(self, chunk: list[bytes]) -> None:
        if chunk:
            assert self._file is not None
            self._file.write(b"".join(chunk))

    def _close(self, *, sync: bool) -> None:
        file, self._file = self._file, None
        if file is None:
            return
        with file:
            if sync:
                file.flush()
                os.fsync(file.fileno())

    def _where(self) -> str:
        context = self.context
        return f"'{context.uid}' (subtask {context.subtask_index + 1}/{context.parallelism})"

    def __repr__(self) -> str:
        where = f"{self.uid}-{self.context.subtask_index}-{self.fence}"
        return f"<PartFiles {where} open={self._file is not None}>"


def file_name_safe(uid: str) -> str:
    """``uid`` with every character a file name cannot hold replaced by ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", uid)


def new_fence(used: set[str]) -> str:
    """Return a random 12-hex-digit fence not in ``used``."""
    # Random, so that attempts in other processes (whose attempt numbers restart at 0) never
    # share a name; checked against the directory, so that no collision is left to chance.
    while (fence := secrets.token_hex(6)) in used:
        pass
    return fence


def listed(directory: Path) -> list[str]:
    """The names in ``directory``, none if it does not exist."""
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []


def fsync_directory(directory: Path) -> None:
    """Make renames in ``directory`` durable (POSIX)."""
    # A renamed file's name is durable only once its directory is synced; Windows cannot
    # open a directory for that, and makes names durable with the file.
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
