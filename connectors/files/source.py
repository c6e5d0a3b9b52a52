"""FileSource: text lines from files, one split per file, resumable by byte offset."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import BinaryIO, TypeAlias

import anyio.to_thread

from lockgate.connectors.errors import (
    InputNotFound,
    InvalidSplit,
    UndecodableInput,
)
from lockgate.engine.io.sources import (
    Source,
    SourceContext,
    SourceProgress,
    SourceReader,
    SourceSplit,
    SplitRecords,
)

__all__ = ["FileSource", "StrPath"]

StrPath: TypeAlias = str | os.PathLike[str]

_READ_BUFFER_BYTES = 1 << 20


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

    With a watermark strategy each file has a watermark of its own, as Flink's file splits:
    the file being read makes its subtask's watermark; a file not started yet is idle, and
    one read to its end finished, so neither holds the watermark back.
    """

    def __init__(
        self, path_or_paths: StrPath | Iterable[StrPath], *, encoding: str = "utf-8"
    ) -> None:
        self._paths = _as_paths(path_or_paths)
        self._encoding = _line_encoding(encoding)
        self._readers: dict[int, _FileReader] = {}

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
        reader = self._readers[context.subtask_index] = _FileReader(cursors)
        return reader

    def progress(self) -> SourceProgress | None:
        """The bytes the latest reader of each subtask has read, of all the files' bytes.

        ``None`` while a file is missing (the job fails on it then).
        """
        try:
            total = sum(os.path.getsize(path) for path in self._paths)
        except OSError:
            return None
        done = sum(reader.offsets for reader in self._readers.values())
        return SourceProgress(min(done, total), total, "bytes")

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
        while runs := await self.read_splits(max_records):
            if runs[-1].records:
                return runs[-1].records
        return []

    async def read_splits(self, max_records: int) -> list[SplitRecords[str]]:
        """``read``'s lines as a run of their file, after the files it finished meanwhile."""
        if max_records < 1:
            raise ValueError(f"max_records must be at least 1; got {max_records}")
        return await anyio.to_thread.run_sync(self._read_blocking, max_records)

    def idle_splits(self) -> list[str]:
        """The files not started yet: they hold no watermark back until they are read."""
        return [cursor.path for cursor in self._cursors[self._current + 1 :]]

    def snapshot_splits(self) -> list[SourceSplit]:
        """Return every assigned file with the byte offset after the last line returned."""
        return [SourceSplit(split_id=c.path, position=c.offset) for c in self._cursors]

    @property
    def offsets(self) -> int:
        """The bytes of its files it has read past, together."""
        return sum(cursor.offset for cursor in self._cursors)

    async def close(self) -> None:
        """Close the file being read, if any."""
        for cursor in self._cursors:
            cursor.close()

    def _read_blocking(self, max_records: int) -> list[SplitRecords[str]]:
        finished: list[SplitRecords[str]] = []
        while self._current < len(self._cursors):
            cursor = self._cursors[self._current]
            lines = cursor.read_lines(max_records)
            if lines:
                return [*finished, SplitRecords(cursor.path, lines)]
            cursor.close()
            self._current += 1
            finished.append(SplitRecords(cursor.path, [], finished=True))
        return finished

    def __repr__(self) -> str:
        files = ", ".join(f"{c.path!r}@{c.offset}" for c in self._cursors)
        return f"<FileSourceReader [{files}]>"
