"""WriterId: which FileSink writer a file belongs to, and the names of the writer's own files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

__all__ = ["WriterFile", "WriterId"]

WriterFile: TypeAlias = Literal["lock", "committed"]

_WRITER_FILE = re.compile(
    r"\.part-(?P<uid>.+)-(?P<subtask>\d+)-(?P<fence>[0-9a-f]{12})\.(?P<kind>lock|committed)"
)


@dataclass(frozen=True, slots=True)
class WriterId:
    """One writer of a FileSink: a sink uid's subtask in one attempt, told apart by its fence.

    Every file a writer makes carries the three in its name: its part files
    (``part-<uid>-<subtask>-<fence>-<n><ext>``, see ``FileTransaction``), its lock
    ``.part-<uid>-<subtask>-<fence>.lock`` (``WriterLock``) and its commit record
    ``.part-<uid>-<subtask>-<fence>.committed`` (``CommitRecord``). ``uid`` is file-name-safe.
    """

    uid: str
    subtask: int
    fence: str

    @property
    def token(self) -> str:
        """``<subtask>-<fence>``: this writer among the writers of its uid (``of_token``)."""
        return f"{self.subtask}-{self.fence}"

    @classmethod
    def of_token(cls, uid: str, token: str) -> WriterId:
        """The writer of ``uid`` that ``token`` names."""
        subtask, fence = token.split("-")
        return cls(uid, int(subtask), fence)

    def path(self, directory: Path, kind: WriterFile) -> Path:
        """Where this writer's ``kind`` file is in ``directory``."""
        return directory / f".part-{self.uid}-{self.subtask}-{self.fence}.{kind}"

    @classmethod
    def of_file(cls, name: str) -> tuple[WriterId, WriterFile] | None:
        """The writer and kind of a lock or commit record named ``name``, else ``None``."""
        match = _WRITER_FILE.fullmatch(name)
        if match is None:
            return None
        kind: WriterFile = "lock" if match["kind"] == "lock" else "committed"
        return cls(match["uid"], int(match["subtask"]), match["fence"]), kind
