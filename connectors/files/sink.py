"""FileSink: exactly-once part files, published by two-phase commit."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeAlias

import anyio.to_thread
import orjson

from lockgate.connectors.errors import (
    ConnectorError,
)
from lockgate.connectors.files.commit_record import CommitRecord
from lockgate.connectors.files.parts import (
    FileTransaction,
    PartFiles,
    PartName,
    RollingPolicy,
    file_name_safe,
    fsync_directory,
    listed,
)
from lockgate.connectors.files.source import StrPath
from lockgate.connectors.files.writer_id import WriterId
from lockgate.engine import TypeCodec
from lockgate.engine.io.sinks import SinkContext, TwoPhaseCommitSink, TwoPhaseCommitWriter
from lockgate.engine.io.transactions import TransactionLog

__all__ = ["FileFormat", "FileSink", "FileTransaction", "RollingPolicy"]

FileFormat: TypeAlias = Literal["text", "jsonl"]

_EXTENSIONS: dict[str, str] = {"text": ".txt", "jsonl": ".jsonl"}
_DEFAULT_ROLLING = RollingPolicy()


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
    subtask 0 may commit old subtask 2's files), and its open ones are aborted. Each commit
    is recorded in a hidden commit record of the transaction's writer
    (``.part-<uid>-<subtask>-<fence>.committed``), so readers may move committed part files
    away: a restored part whose files are gone counts as committed if the record says so.
    A restored part with neither its pending file, nor its visible one, nor a record of its
    commit raises ``ConnectorError``: its records would be lost.

    Cleanup: a writer holds a lock (``.part-<uid>-<subtask>-<fence>.lock``) from open to
    close, which the OS frees if its process dies, and removes files of other writers only
    once their locks are free: jobs sharing a directory and a sink uid, or a job started
    from a savepoint of one still running, never remove each other's files. On open a
    subtask removes the in-progress files of ended writers of its index (the last subtask
    also owns indices beyond the parallelism): in-progress files are never committed. After
    the first checkpoint of its attempt completes (when every subtask has committed what it
    restored) it removes every hidden file of the ended writers whose transactions it
    restored: their pending files were pre-committed after the restored checkpoint, by the
    attempt this one replaces; the transactions it begins until then name those ended
    writers, so if it is killed first, whoever restores its checkpoint removes them too. A
    writer that ends with everything committed removes its
    record; pending files of ended writers no restored checkpoint names stay, since a
    restore of their own checkpoints may still commit them.
    """

    def __init__(
        self,
        directory: StrPath,
        *,
        format: FileFormat = "text",
        rolling: RollingPolicy = _DEFAULT_ROLLING,
    ) -> None:
        if format not in _EXTENSIONS:
            raise ValueError(f"FileSink format must be 'text' or 'jsonl'; got {format!r}")
        self._directory = Path(directory).absolute()
        self._format = format
        self._rolling = rolling
        self._writers: dict[tuple[str, int], PartFiles] = {}

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
        parts = PartFiles(self._directory, context, extension, encode, self._rolling)
        return _FileSinkWriter(self, context, parts)

    async def begin_transaction(self, context: SinkContext) -> FileTransaction:
        """Begin a transaction of the subtask's writer; its first part opens with a record."""
        parts = self._writers.get((file_name_safe(context.uid), context.subtask_index))
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
        """Rename the pending part files to their visible names and record the commit.

        Parts committed before (visible, or recorded and moved away since) are skipped.

        Raises:
            ConnectorError: a part has neither its pending file, nor its visible file, nor a
                recorded commit: its records are lost.
        """
        parts = self._writers.get((txn.uid, txn.subtask))
        owner = parts is not None and parts.owns(txn)
        await anyio.to_thread.run_sync(partial(_commit_blocking, txn, compact=owner))

    async def recover_and_commit(self, txn: FileTransaction) -> None:
        """Commit a transaction restored from a checkpoint, as ``commit`` does.

        It may have been committed after the checkpoint was taken, and its visible files moved
        away since by whoever reads the directory: its writer's commit record tells.

        Raises:
            ConnectorError: a part has neither its pending file, nor its visible file, nor a
                recorded commit: something removed the files of a pre-committed transaction.
        """
        await anyio.to_thread.run_sync(partial(_commit_blocking, txn, compact=False))

    async def abort(self, txn: FileTransaction) -> None:
        """Delete the transaction's hidden part files, closing the open one."""
        parts = self._writers.get((txn.uid, txn.subtask))
        owner = parts if parts is not None and parts.owns(txn) else None
        await anyio.to_thread.run_sync(_abort_blocking, txn, owner)

    def part_files(self) -> list[Path]:
        """Return the committed part files, by uid, subtask, writer and part; blocking."""
        named = [
            (parsed.order, self._directory / name)
            for name in listed(self._directory)
            if (parsed := PartName.parse(name)) and parsed.is_visible(_EXTENSIONS[self._format])
        ]
        return [path for _, path in sorted(named)]

    def read_lines(self) -> list[str]:
        """Return the lines of every committed part file, file by file; blocking.

        For tests and examples: ``[orjson.loads(line) for line in sink.read_lines()]`` reads
        back a ``"jsonl"`` sink's records. In-progress and pending files are never read.
        """
        return [line for path in self.part_files() for line in _lines_of(path)]

    def _writer_of(self, txn: FileTransaction) -> PartFiles:
        parts = self._writers.get((txn.uid, txn.subtask))
        if parts is None or not parts.owns(txn):
            raise RuntimeError(
                f"file sink transaction {txn.fence}/{txn.parts} of subtask {txn.subtask} is not "
                "open in a writer of this sink; only the writer that began it may write to it"
            )
        return parts

    def _register(self, parts: PartFiles) -> None:
        self._writers[parts.key] = parts

    def _unregister(self, parts: PartFiles) -> None:
        if self._writers.get(parts.key) is parts:
            del self._writers[parts.key]

    def __repr__(self) -> str:
        return (
            f"<FileSink directory='{self._directory}' format={self._format!r} "
            f"writers={len(self._writers)}>"
        )


class _FileSinkWriter(TwoPhaseCommitWriter[Any, FileTransaction]):
    """The engine's two-phase-commit writer, plus the writer lock and the removal of leftovers.

    Invariant: between open and close the writer holds its lock; it removes the leftovers of
    its predecessors (the ended writers whose transactions it restored) once, after the
    first checkpoint of its attempt completes.
    """

    def __init__(self, sink: FileSink, context: SinkContext, parts: PartFiles) -> None:
        super().__init__(sink, context)
        self._file_sink = sink
        self._parts = parts
        self._restored = _writers_of(context.restored_state)
        self._predecessors: frozenset[WriterId] | None = None

    async def open(self) -> None:
        """Pick a fence and lock it, remove ended writers' in-progress files, recover, begin."""
        start = partial(self._parts.start, self._restored)
        self._predecessors = await anyio.to_thread.run_sync(start)
        self._file_sink._register(self._parts)
        await super().open()

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Commit; after the attempt's first completed checkpoint, remove predecessors' leftovers.

        Every subtask has recovered once a checkpoint of this attempt completed, so no
        restored transaction needs a predecessor's hidden files any more.
        """
        await super().notify_checkpoint_complete(checkpoint_id)
        predecessors, self._predecessors = self._predecessors, None
        if predecessors:
            await anyio.to_thread.run_sync(self._parts.remove_leftovers_of, predecessors)

    async def close(self) -> None:
        """Abort the open transaction, stop taking transactions, release the lock."""
        finished = self.transactions.current is None and not self.transactions.pending
        try:
            await super().close()
        finally:
            self._file_sink._unregister(self._parts)
            await anyio.to_thread.run_sync(partial(self._parts.stop, finished=finished))


def _writers_of(restored_state: Sequence[Any]) -> frozenset[WriterId]:
    log: TransactionLog[FileTransaction] = TransactionLog.from_state(restored_state)
    restored = [*(txn for _, txn in log.pending), *log.lingering]
    return frozenset(writer for txn in restored for writer in (txn.writer, *txn.inherited_writers))


def _commit_blocking(txn: FileTransaction, *, compact: bool) -> None:
    record = txn.record
    renamed = [part for part in txn.parts if _renamed(txn, part, record)]
    if txn.parts:
        record.add(txn.parts, compact=compact)
    if renamed:
        fsync_directory(Path(txn.directory))


def _renamed(txn: FileTransaction, part: int, record: CommitRecord) -> bool:
    """Rename part ``part`` into place; ``False`` if it was committed before."""
    final = txn.final_path(part)
    try:
        os.rename(txn.hidden_path(part, "pending"), final)
    except FileNotFoundError as error:
        if final.exists() or record.covers(part):
            return False
        raise ConnectorError(
            f"file sink '{txn.uid}' cannot commit '{final.name}' in '{txn.directory}' (a "
            f"transaction of subtask {txn.subtask}): neither it nor its pending file exists, "
            f"and '{record.path.name}' records no commit of it, so something removed the "
            "hidden part files of a pre-committed transaction and its records are lost; give "
            "each job writing to this directory its own sink uid or directory, and restore "
            "from a checkpoint or savepoint taken after these files were lost"
        ) from error
    return True


def _abort_blocking(txn: FileTransaction, owner: PartFiles | None) -> None:
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
