"""File connectors: a source of text lines resumable by byte offset, a sink of part files."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, Literal, TypeAlias

import anyio.to_thread
import orjson

from lockgate.connectors.errors import (
    InputNotFound,
    InvalidSplit,
    UndecodableInput,
    UnencodableRecord,
)
from lockgate.engine.sinks import Sink, SinkContext, SinkWriter
from lockgate.engine.sources import Source, SourceContext, SourceReader, SourceSplit

__all__ = ["FileSink", "FileSource"]

StrPath: TypeAlias = str | os.PathLike[str]
FileFormat: TypeAlias = Literal["text", "jsonl"]

_READ_BUFFER_BYTES = 1 << 20
_EXTENSIONS: dict[str, str] = {"text": ".txt", "jsonl": ".jsonl"}


class FileSource(Source[str]):
    r"""A bounded source of the text lines of one or more files, resumable by byte offset.

    Each file is one split: its id is the path as given, its position the byte offset of the
    next line, so a reader built from snapshotted splits resumes exactly after the last line
    returned. Lines come without their ending (``\n`` or ``\r\n``); a last line without a
    newline is still a line; an empty file has none. Files are read in the order given.

    A reader checks that a restored offset is still the start of a line inside the file, so
    a file changed since the checkpoint raises ``InvalidSplit`` instead of yielding torn
    lines. File I/O runs in a worker thread, one hop per ``read`` of up to ``max_records``
    lines through a 1 MiB buffer. The encoding must write a newline as the single byte
    ``0x0A`` (UTF-8, ASCII, Latin-1, cp1252, ...): positions are found in bytes.
    """

    def __init__(
        self, path_or_paths: StrPath | Iterable[StrPath], *, encoding: str = "utf-8"
    ) -> None:
        self._paths = _as_paths(path_or_paths)
        self._encoding = _line_encoding(encoding)

    @property
    def paths(self) -> tuple[str, ...]:
        """The files read, in order, as given."""
        return self._paths

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        """Return one split per file, at offset 0; raise ``InputNotFound`` for a missing file."""
        if parallelism < 1:
            raise ValueError(f"parallelism must be at least 1; got {parallelism}")
        for path in self._paths:
            if not os.path.isfile(path):
                raise InputNotFound(f"file source has no file at '{path}'; check the path")
        return [SourceSplit(split_id=path, position=0) for path in self._paths]

    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[str]:
        """Return a reader for ``splits`` (files), each resumed from its byte offset."""
        where = (
            f"file source '{context.uid}' (subtask {context.subtask_index + 1}/"
            f"{context.parallelism})"
        )
        cursors = [_LineCursor.from_split(split, self._encoding, where) for split in splits]
        return _FileReader(cursors)

    def __repr__(self) -> str:
        return f"<FileSource files={len(self._paths)} encoding={self._encoding!r}>"


def _as_paths(path_or_paths: StrPath | Iterable[StrPath]) -> tuple[str, ...]:
    if isinstance(path_or_paths, str | os.PathLike):
        paths: tuple[str, ...] = (os.fspath(path_or_paths),)
    else:
        paths = tuple(os.fspath(path) for path in path_or_paths)
    if not paths:
        raise ValueError("FileSource needs at least one path; got none")
    if len(set(paths)) < len(paths):
        raise ValueError(f"FileSource got a path twice in {list(paths)}; give each file once")
    return paths


def _line_encoding(encoding: str) -> str:
    try:
        newline = "\n".encode(encoding)
    except LookupError as error:
        raise ValueError(f"unknown encoding {encoding!r}") from error
    if newline != b"\n":
        raise ValueError(
            f"encoding {encoding!r} writes a newline as {newline!r}; FileSource needs an "
            "encoding that writes it as b'\\n', such as 'utf-8' or 'latin-1'"
        )
    return encoding


class _LineCursor:
    """Reads the lines of one file from a byte offset, blocking; for a worker thread."""

    __slots__ = ("_encoding", "_file", "_where", "offset", "path")

    def __init__(self, path: str, offset: int, encoding: str, where: str) -> None:
        self.path = path
        self.offset = offset
        self._encoding = encoding
        self._where = where
        self._file: BinaryIO | None = None

    @classmethod
    def from_split(cls, split: SourceSplit, encoding: str, where: str) -> _LineCursor:
        offset = split.position
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise InvalidSplit(
                f"{where} cannot resume file '{split.split_id}' from position {offset!r}: "
                "expected a byte offset (an int >= 0); restore from a checkpoint of a FileSource"
            )
        return cls(split.split_id, offset, encoding, where)

    def read_lines(self, max_records: int) -> list[str]:
        """Return up to ``max_records`` next lines and move past them; ``[]`` at end of file."""
        block = b"".join(islice(self._opened(), max_records))
        lines = self._decode(block).split("\n")
        if lines[-1] == "":
            lines.pop()
        self.offset += len(block)
        return lines

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _opened(self) -> BinaryIO:
        if self._file is None:
            self._file = self._open_at_offset()
        return self._file

    def _open_at_offset(self) -> BinaryIO:
        try:
            file = open(self.path, "rb", buffering=_READ_BUFFER_BYTES)  # noqa: SIM115 - kept open
        except FileNotFoundError as error:
            raise InputNotFound(f"{self._where} has no file at '{self.path}'") from error
        try:
            self._check_line_start(file)
        except BaseException:
            file.close()
            raise
        file.seek(self.offset)
        return file

    def _check_line_start(self, file: BinaryIO) -> None:
        size = os.fstat(file.fileno()).st_size
        if self.offset in (0, size):
            return
        if self.offset < size:
            file.seek(self.offset - 1)
            if file.read(1) == b"\n":
                return
        raise InvalidSplit(
            f"{self._where} cannot resume '{self.path}' at byte {self.offset}: it is not the "
            f"start of a line in the file ({size} bytes); the file changed since the checkpoint"
        )

    def _decode(self, block: bytes) -> str:
        try:
            text = block.decode(self._encoding)
        except UnicodeDecodeError as error:
            raise UndecodableInput(
                f"{self._where} cannot decode '{self.path}' at byte {self.offset + error.start} "
                f"as {self._encoding!r}: {error.reason}; give FileSource the file's encoding"
            ) from error
        return text.replace("\r\n", "\n") if "\r" in text else text


class _FileReader(SourceReader[str]):
    """Reads its files one after another, one worker-thread hop per ``read``."""

    def __init__(self, cursors: list[_LineCursor]) -> None:
        self._cursors = cursors
        self._current = 0

    async def read(self, max_records: int) -> list[str]:
        """Return the next up to ``max_records`` lines of the current file; ``[]`` at the end."""
        if max_records < 1:
            raise ValueError(f"max_records must be at least 1; got {max_records}")
        return await anyio.to_thread.run_sync(self._read_blocking, max_records)

    def snapshot_splits(self) -> list[SourceSplit]:
        """Return every assigned file with the byte offset after the last line returned."""
        return [SourceSplit(split_id=c.path, position=c.offset) for c in self._cursors]

    async def close(self) -> None:
        """Close the file being read, if any."""
        for cursor in self._cursors:
            cursor.close()

    def _read_blocking(self, max_records: int) -> list[str]:
        while self._current < len(self._cursors):
            cursor = self._cursors[self._current]
            lines = cursor.read_lines(max_records)
            if lines:
                return lines
            cursor.close()
            self._current += 1
        return []

    def __repr__(self) -> str:
        files = ", ".join(f"{c.path!r}@{c.offset}" for c in self._cursors)
        return f"<FileSourceReader [{files}]>"


class FileSink(Sink[Any]):
    """A sink that appends records as lines to part files in a directory, one per subtask.

    Subtask ``i`` of the sink operator ``uid`` appends to ``part-{uid}-{i}.txt`` (format
    ``"text"``: ``str(record)`` and a newline) or ``part-{uid}-{i}.jsonl`` (format ``"jsonl"``:
    ``orjson.dumps(record)`` and a newline), in the order records arrive; characters of the uid
    other than letters, digits, ``.``, ``_`` and ``-`` become ``_``. Files are UTF-8 and the
    directory is created with its parents. Each ``write`` is one write to the OS, made from a
    worker thread; ``finish`` fsyncs the part file.

    Guarantee today: at-least-once. Every written line is visible at once, and a restarted job
    appends the records replayed since its last checkpoint again. Part files are the unit that
    will become transactional (written aside, published on checkpoint commit).
    """

    def __init__(self, directory: StrPath, *, format: FileFormat = "text") -> None:
        if format not in _EXTENSIONS:
            raise ValueError(f"FileSink format must be 'text' or 'jsonl'; got {format!r}")
        self._directory = Path(directory)
        self._format = format

    @property
    def directory(self) -> Path:
        """The directory holding the part files."""
        return self._directory

    def create_writer(self, context: SinkContext) -> SinkWriter[Any]:
        """Return the writer appending to this subtask's part file."""
        uid = re.sub(r"[^A-Za-z0-9._-]", "_", context.uid)
        name = f"part-{uid}-{context.subtask_index}{_EXTENSIONS[self._format]}"
        encode = _encode_jsonl if self._format == "jsonl" else _encode_text
        return _PartFileWriter(self._directory / name, encode, context)

    def part_files(self) -> list[Path]:
        """Return the part files in the directory, sorted by name; blocking."""
        return sorted(self._directory.glob(f"part-*{_EXTENSIONS[self._format]}"))

    def read_lines(self) -> list[str]:
        """Return the lines of every part file, file by file in name order; blocking.

        For tests and examples, once a job has finished: ``[orjson.loads(line) for line in
        sink.read_lines()]`` reads back a ``"jsonl"`` sink's records.
        """
        return [line for path in self.part_files() for line in _lines_of(path)]

    def __repr__(self) -> str:
        return f"<FileSink directory='{self._directory}' format={self._format!r}>"


def _lines_of(path: Path) -> list[str]:
    lines = path.read_bytes().decode("utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _encode_text(records: list[Any]) -> bytes:
    return ("\n".join(map(str, records)) + "\n").encode("utf-8")


def _encode_jsonl(records: list[Any]) -> bytes:
    return b"\n".join(map(orjson.dumps, records)) + b"\n"


def _fsync_directory(directory: Path) -> None:
    # A new file's name is durable only once its directory is synced; Windows cannot open a
    # directory for that, and makes names durable with the file.
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class _PartFileWriter(SinkWriter[Any]):
    """Appends encoded batches to one part file, opened on first use."""

    def __init__(
        self, path: Path, encode: Callable[[list[Any]], bytes], context: SinkContext
    ) -> None:
        self._path = path
        self._encode = encode
        self._context = context
        self._file: BinaryIO | None = None

    async def open(self) -> None:
        """Create the directory and the part file, if they are missing."""
        await anyio.to_thread.run_sync(self._opened)

    async def write(self, records: list[Any]) -> None:
        """Append ``records`` to the part file with one write to the OS."""
        if records:
            payload = self._encoded(records)
            await anyio.to_thread.run_sync(self._write_blocking, payload)

    async def finish(self) -> None:
        """Flush the part file and fsync it."""
        await anyio.to_thread.run_sync(self._sync_blocking)

    async def close(self) -> None:
        """Close the part file."""
        if self._file is not None:
            file, self._file = self._file, None
            await anyio.to_thread.run_sync(file.close)

    def _encoded(self, records: list[Any]) -> bytes:
        try:
            return self._encode(records)
        except orjson.JSONEncodeError as error:
            context = self._context
            raise UnencodableRecord(
                f"file sink '{context.uid}' (subtask {context.subtask_index + 1}/"
                f"{context.parallelism}) cannot write a record as JSON: {error}; map records to "
                "dicts, lists, str, numbers, bool or None first, or use format='text'"
            ) from error

    def _opened(self) -> BinaryIO:
        if self._file is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self._path, "ab")  # noqa: SIM115 - closed in close()
        return self._file

    def _write_blocking(self, payload: bytes) -> None:
        file = self._opened()
        file.write(payload)
        file.flush()

    def _sync_blocking(self) -> None:
        file = self._opened()
        file.flush()
        os.fsync(file.fileno())
        _fsync_directory(self._path.parent)

    def __repr__(self) -> str:
        return f"<FileSinkWriter '{self._path}' open={self._file is not None}>"
