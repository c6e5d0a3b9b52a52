"""The Markdown pages of docs/, read as the tests need them: fenced blocks and directives."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
SNIPPET = re.compile(r'^--8<--\s+"(?P<path>[^"]+)"\s*$')
NOT_RUN = "no-run"  # the class that marks a Python block the tests do not run


@dataclass(frozen=True, slots=True)
class Block:
    """A fenced code block: its page, the line its code starts on, its language and classes."""

    page: str
    line: int
    language: str
    classes: tuple[str, ...]
    code: str

    @property
    def is_python(self) -> bool:
        return self.language == "python"

    @property
    def runs(self) -> bool:
        return self.is_python and NOT_RUN not in self.classes and not self.included_files

    @property
    def included_files(self) -> list[str]:
        """The files a block made of snippet lines (``--8<-- "path"``) shows, else []."""
        lines = [line.strip() for line in self.code.splitlines() if line.strip()]
        found = [SNIPPET.match(line) for line in lines]
        return [m["path"] for m in found if m] if lines and all(found) else []

    @property
    def where(self) -> str:
        return f"docs/{self.page}:{self.line}"


def pages() -> list[Path]:
    """Every Markdown page of docs/, in a stable order."""
    return sorted(DOCS.rglob("*.md"))


def page_name(path: Path) -> str:
    return path.relative_to(DOCS).as_posix()


def blocks(path: Path, *, name: str | None = None) -> list[Block]:
    """The fenced code blocks of a page, in order (fences may be indented, as in admonitions)."""
    return list(_blocks(name or page_name(path), path.read_text().splitlines()))


def _blocks(page: str, lines: list[str]) -> Iterator[Block]:
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        language, classes = _info(opening["info"])
        end = index + 1
        while end < len(lines) and not _closes(lines[end], fence):
            end += 1
        code = "\n".join(line.removeprefix(indent) for line in lines[index + 1 : end])
        yield Block(page, index + 2, language, classes, code)
        index = end + 1


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {fence[0]}


def _info(info: str) -> tuple[str, tuple[str, ...]]:
    """The language and classes of a fence: ``python``, or ``{.python .no-run}``."""
    info = info.strip()
    if info.startswith("{"):
        classes = tuple(re.findall(r"\.([\w-]+)", info))
        return (classes[0] if classes else ""), classes[1:]
    return (info.split()[0] if info else ""), ()
