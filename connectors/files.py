"""File connectors: a source of lines resumable by byte offset, an exactly-once part-file sink."""

from lockgate.connectors.file_sink import FileFormat, FileSink, FileTransaction, RollingPolicy
from lockgate.connectors.file_source import FileSource, StrPath

__all__ = ["FileFormat", "FileSink", "FileSource", "FileTransaction", "RollingPolicy", "StrPath"]
