"""File connectors: a source of lines resumable by byte offset, an exactly-once part-file sink."""

from lockgate.connectors.files.sink import FileFormat, FileSink, FileTransaction, RollingPolicy
from lockgate.connectors.files.source import FileSource, StrPath

__all__ = ["FileFormat", "FileSink", "FileSource", "FileTransaction", "RollingPolicy", "StrPath"]
