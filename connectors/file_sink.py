"""FileSink: exactly-once part files, published by two-phase commit."""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, Literal, TypeAlias

import anyio.to_thread
import orjson

from lockgate.connectors.errors import (
    ConnectorError,
    UnencodableRecord,
)
from lockgate.connectors.file_source import StrPath
from lockgate.engine import TypeCodec
from lockgate.engine.sinks import SinkContext, TwoPhaseCommitSink, TwoPhaseCommitWriter

__all__ = ["FileFormat", "FileSink", "FileTransaction", "RollingPolicy"]

FileFormat: TypeAlias = Literal["text", "jsonl"]
PartState: TypeAlias = Literal["inprogress", "pending"]

_EXTENSIONS: dict[str, str] = {"text": ".txt", "jsonl": ".jsonl"}


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
    """

    directory: str
    uid: str
    subtask: int
    fence: str
    extension: str
    parts: list[int] = field(default_factory=list)

    def final_path(self, part: int) -> Path:
        """Where part ``part`` is visible once committed."""
        return Path(self.directory, f"{self._stem(part)}{self.extension}")

    def hidden_path(self, part: int, state: PartState) -> Path:
        """Where part ``part`` is while ``"inprogress"`` or ``"pending"``."""
        return Path(self.directory, f".{self._stem(part)}{self.extension}.{state}")

    def _stem(self, part: int) -> str:
        return f"part-{self.uid}-{self.subtask}-{self.fence}-{part}"


class FileSink(TwoPhaseCommitSink[Any, FileTransaction]):
    """Writes records as lines to part files in a directory, exactly once with checkpointing.

    Guarantee: exactly-once with checkpointing. A line becomes visible only once the
    checkpoint after its record completes (at the end of a bounded job, with its final
    checkpoint); a restored or restarted job neither loses a visible line nor shows one
    twice. Format ``"text"`` writes ``str(record)`` and a newline, ``"jsonl"``
    ``orjson.dumps(record)`` and a newline, UTF-8, in the order records reach the subtask.

    Each transaction is a series of part files (see ``FileTransaction`` for the names; uid
    characters other than letters, digits, ``.``, ``_`` and ``-`` become ``_``). Writing goes
    to hidden ``.inprogress`` files, rolled by the ``RollingPolicy``. Pre-commit, at the
    checkpoint barrier, fsyncs them and renames them to hidden ``.pending`` files; commit,
    once the checkpoint completes, renames each atomically to its visible name, and does
    nothing for a part whose visible file exists and pending file is gone (committed
    before). Abort deletes the hidden files. The ``fence`` in every name is random per
    writer and unused in the directory, so attempts of a job, also in other processes,
    never share a name. Blocking file I/O runs in worker threads.

    Recovery: the restored checkpoint's pending transactions are committed by whichever new
    subtask receives them (the engine splits them over the new subtasks, so after a rescale
    subtask 0 may commit old subtask 2's files), and its open ones are aborted. Files no
    checkpoint refers to, left by a failed or killed attempt, are removed by the subtask
    that owns their index (the last subtask also owns indices beyond the parallelism), never
    by one subtask for all: no subtask sees the whole restored state, and only the owner
    knows which of its index's files it is writing now. In-progress files are never
    committed, so the owner removes them on open. A pending file may belong to a restored
    transaction another subtask commits on open, so the owner removes orphaned pending
    files after the first checkpoint of its attempt completes, when every subtask has
    opened and so has committed what it restored.
    """

    def __init__(
        self,
        directory: StrPath,
        *,
        format: FileFormat = "text",
        rolling: RollingPolicy = RollingPolicy(),
    ) -> None:
        if format not in _EXTENSIONS:
            raise ValueError(f"FileSink format must be 'text' or 'jsonl'; got {format!r}")
        self._directory = Path(directory).absolute()
        self._format = format
        self._rolling = rolling
        self._writers: dict[tuple[str, int], _PartFiles] = {}

    @property
    def directory(self) -> Path:
        """The directory holding the part files, absolute."""
        return self._directory

    @property
    def rolling(self) -> RollingPolicy:
        """When part files roll."""
        return self._rolling

    def state_types(self) -> Sequence[TypeCodec]:
        """Savepoints store transactions as their directory, names and part numbers."""
        return (TypeCodec.for_dataclass(FileTransaction, "lockgate.FileTransaction"),)

    def create_writer(self, context: SinkContext) -> TwoPhaseCommitWriter[Any, FileTransaction]:
        """Return the writer of one subtask: the engine's, which also removes orphaned files."""
        encode = _encode_jsonl if self._format == "jsonl" else _encode_text
        extension = _EXTENSIONS[self._format]
        parts = _PartFiles(self._directory, context, extension, encode, self._rolling)
        return _FileSinkWriter(self, context, parts)

    async def begin_transaction(self, context: SinkContext) -> FileTransaction:
        """Begin a transaction of the subtask's writer; its first part opens with a record."""
        parts = self._writers.get((_file_name_safe(context.uid), context.subtask_index))
        if parts is None:
            raise RuntimeError(
                f"file sink '{context.uid}' (subtask {context.subtask_index + 1}/"
                f"{context.parallelism}) has no open writer; create_writer() and open() it first"
            )
        return parts.begin()

    async def write(self, txn: FileTransaction, records: list[Any]) -> None:
        """Append ``records`` to the transaction's part files, rolling them as needed."""
        if records:
            parts = self._writer_of(txn)
            lines = parts.encoded(records)
            await anyio.to_thread.run_sync(parts.write, txn, lines, parts.clock.now())

    async def pre_commit(self, txn: FileTransaction) -> None:
        """Fsync the transaction's part files and rename them to pending."""
        await anyio.to_thread.run_sync(self._writer_of(txn).seal, txn)

    async def commit(self, txn: FileTransaction) -> None:
        """Rename the pending part files to their visible names; done parts are skipped.

        Raises:
            ConnectorError: a part has neither its pending nor its visible file.
        """
        await anyio.to_thread.run_sync(partial(_commit_blocking, txn, recovering=False))

    async def recover_and_commit(self, txn: FileTransaction) -> None:
        """Commit a transaction restored from a checkpoint, skipping parts with no file left.

        A restored transaction may have been committed after the checkpoint was taken, and
        its visible files moved away since by whoever reads the directory.
        """
        await anyio.to_thread.run_sync(partial(_commit_blocking, txn, recovering=True))

    async def abort(self, txn: FileTransaction) -> None:
        """Delete the transaction's hidden part files, closing the open one."""
        parts = self._writers.get((txn.uid, txn.subtask))
        owner = parts if parts is not None and parts.owns(txn) else None
        await anyio.to_thread.run_sync(_abort_blocking, txn, owner)

    def part_files(self) -> list[Path]:
        """Return the committed part files, by uid, subtask, writer and part; blocking."""
        named = [
            (parsed.order, self._directory / name)
            for name in _listed(self._directory)
            if (parsed := _PartName.parse(name)) and parsed.is_visible(_EXTENSIONS[self._format])
        ]
        return [path for _, path in sorted(named)]

    def read_lines(self) -> list[str]:
        """Return the lines of every committed part file, file by file; blocking.

        For tests and examples: ``[orjson.loads(line) for line in sink.read_lines()]`` reads
        back a ``"jsonl"`` sink's records. In-progress and pending files are never read.
        """
        return [line for path in self.part_files() for line in _lines_of(path)]

    def _writer_of(self, txn: FileTransaction) -> _PartFiles:
        parts = self._writers.get((txn.uid, txn.subtask))
        if parts is None or not parts.owns(txn):
            raise RuntimeError(
                f"file sink transaction {txn.fence}/{txn.parts} of subtask {txn.subtask} is not "
                "open in a writer of this sink; only the writer that began it may write to it"
            )
        return parts

    def _register(self, parts: _PartFiles) -> None:
        self._writers[parts.key] = parts

    def _unregister(self, parts: _PartFiles) -> None:
        if self._writers.get(parts.key) is parts:
            del self._writers[parts.key]

    def __repr__(self) -> str:
        return (
            f"<FileSink directory='{self._directory}' format={self._format!r} "
            f"writers={len(self._writers)}>"
        )


class _FileSinkWriter(TwoPhaseCommitWriter[Any, FileTransaction]):
    """The engine's two-phase-commit writer, plus the removal of this subtask's orphans."""

    def __init__(self, sink: FileSink, context: SinkContext, parts: _PartFiles) -> None:
        super().__init__(sink, context)
        self._file_sink = sink
        self._parts = parts
        self._pending_orphans_removed = False

    async def open(self) -> None:
        """Pick a fence, remove orphaned in-progress files, then recover and begin."""
        await anyio.to_thread.run_sync(self._parts.start)
        self._file_sink._register(self._parts)
        await super().open()

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Commit; after the attempt's first completed checkpoint, remove orphaned pending files.

        Every subtask has recovered once a checkpoint of this attempt completed, so a pending
        file of another writer with this subtask's index is no restored transaction's.
        """
        await super().notify_checkpoint_complete(checkpoint_id)
        if not self._pending_orphans_removed:
            await anyio.to_thread.run_sync(self._parts.remove_orphans, "pending")
            self._pending_orphans_removed = True

    async def close(self) -> None:
        """Abort the open transaction, then stop taking transactions."""
        try:
            await super().close()
        finally:
            self._file_sink._unregister(self._parts)


_PART_NAME = re.compile(
    r"(?P<hidden>\.)?part-(?P<uid>.+)-(?P<subtask>\d+)-(?P<fence>[0-9a-f]{12})-(?P<part>\d+)"
    r"(?P<extension>\.txt|\.jsonl)(?:\.(?P<state>inprogress|pending))?"
)


@dataclass(frozen=True, slots=True)
class _PartName:
    """A part file's name, taken apart."""

    file_name: str
    uid: str
    subtask: int
    fence: str
    part: int
    extension: str
    state: str | None

    @classmethod
    def parse(cls, name: str) -> _PartName | None:
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
    def order(self) -> tuple[str, int, str, int]:
        return (self.uid, self.subtask, self.fence, self.part)

    def is_visible(self, extension: str) -> bool:
        return self.state is None and self.extension == extension


class _PartFiles:
    """The part files of one sink subtask's writer; blocking methods, for worker threads.

    At most one part file is open: the last one of the open transaction.
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
        self.uid = _file_name_safe(context.uid)
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

    @property
    def key(self) -> tuple[str, int]:
        return (self.uid, self.context.subtask_index)

    def start(self) -> None:
        """Create the directory, pick a fence no file uses, remove orphaned in-progress files."""
        self.directory.mkdir(parents=True, exist_ok=True)
        used = {name.fence for name in self._part_names() if name.uid == self.uid}
        self.fence = _new_fence(used)
        self.remove_orphans("inprogress")

    def owns(self, txn: FileTransaction) -> bool:
        return (txn.uid, txn.subtask, txn.fence) == (*self.key, self.fence)

    def begin(self) -> FileTransaction:
        return FileTransaction(
            str(self.directory), self.uid, self.context.subtask_index, self.fence, self.extension
        )

    def encoded(self, records: list[Any]) -> list[bytes]:
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
            _fsync_directory(self.directory)

    def discard(self) -> None:
        """Close the open part without syncing it: it is about to be deleted."""
        self._close(sync=False)

    def remove_orphans(self, state: PartState) -> None:
        """Delete this subtask's ``state`` files that other writers left."""
        for name in self._part_names():
            if name.state == state and name.fence != self.fence and self._owns_index(name):
                (self.directory / name.file_name).unlink(missing_ok=True)

    def _owns_index(self, name: _PartName) -> bool:
        index, parallelism = self.context.subtask_index, self.context.parallelism
        beyond = index == parallelism - 1 and name.subtask >= parallelism
        return name.uid == self.uid and (name.subtask == index or beyond)

    def _part_names(self) -> list[_PartName]:
        return [parsed for name in _listed(self.directory) if (parsed := _PartName.parse(name))]

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


def _file_name_safe(uid: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", uid)


def _new_fence(used: set[str]) -> str:
    # Random, so that attempts in other processes (whose attempt numbers restart at 0) never
    # share a name; checked against the directory, so that no collision is left to chance.
    while (fence := secrets.token_hex(6)) in used:
        pass
    return fence


def _listed(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []


def _commit_blocking(txn: FileTransaction, *, recovering: bool) -> None:
    renamed = False
    for part in txn.parts:
        pending, final = txn.hidden_path(part, "pending"), txn.final_path(part)
        try:
            os.rename(pending, final)
        except FileNotFoundError as error:
            if not (recovering or final.exists()):
                raise ConnectorError(
                    f"file sink cannot commit '{final.name}' in '{txn.directory}': neither it nor "
                    "its pending file exists; something removed the hidden part files of a "
                    "pre-committed transaction, and its records are lost"
                ) from error
        else:
            renamed = True
    if renamed:
        _fsync_directory(Path(txn.directory))


def _abort_blocking(txn: FileTransaction, owner: _PartFiles | None) -> None:
    if owner is not None:
        owner.discard()
    for part in txn.parts:
        txn.hidden_path(part, "inprogress").unlink(missing_ok=True)
        txn.hidden_path(part, "pending").unlink(missing_ok=True)


def _lines_of(path: Path) -> list[str]:
    lines = path.read_bytes().decode("utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _encode_text(records: list[Any]) -> list[bytes]:
    return [f"{record}\n".encode() for record in records]


def _encode_jsonl(records: list[Any]) -> list[bytes]:
    return [orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE) for record in records]


def _fsync_directory(directory: Path) -> None:
    # A renamed file's name is durable only once its directory is synced; Windows cannot
    # open a directory for that, and makes names durable with the file.
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
