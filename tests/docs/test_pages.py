"""The README and the pages keep to what they are for.

The README is a short entry: what lockgate is, its status, the two commands, one job and
links; its job runs and its links lead somewhere. Measured figures live only on the
benchmarks page, each with its date, machine and command, so no other page can quote a
stale one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.pages import DOCS, ROOT, blocks, page_name, pages
from tests.docs.test_guides import run_page

README = ROOT / "README.md"
BENCHMARKS = DOCS / "benchmarks.md"
LINK = re.compile(r"\]\((?P<target>[^)#\s]+)(?:#[^)]*)?\)")
# What a measured figure looks like: a ratio to a floor or an ideal, a rate, a duration
# per record or request.
FIGURE = re.compile(
    r"\d(?:\.\d+)? ?x (?:floor|ideal|the bytes|full|without|files|as large)"
    r"|\d[\d,.]* ?(?:M )?(?:records|events|lines|words|calls|requests|ev)/s"
    r"|\d[\d.]* ?(?:us|µs) (?:of loop time |per )"
)


CODE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[ \t]*$|`[^`\n]*`", re.MULTILINE | re.DOTALL)
GOAL = re.compile(r"(?:at least|at most|under|goal:?) $")


def prose(text: str) -> str:
    """The text without its code: fenced blocks and inline code."""
    return CODE.sub("", text)


def figures(text: str) -> list[str]:
    """The measured figures quoted in ``text``: a goal (at least 0.90 x ...) is none."""
    return [
        m[0]
        for m in FIGURE.finditer(text)
        if not GOAL.search(text[max(0, m.start() - 9) : m.start()])
    ]


def test_the_readme_job_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    readme_blocks = [block for block in blocks(README, name="README.md") if block.runs]

    assert len(readme_blocks) == 1
    run_page("README.md", readme_blocks)


def test_the_readme_stays_short() -> None:
    assert len(README.read_text().splitlines()) <= 150


@pytest.mark.parametrize("path", [README, *pages()], ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file(path: Path) -> None:
    targets = [m["target"] for m in LINK.finditer(prose(path.read_text()))]
    relative = [t for t in targets if "://" not in t and not t.startswith("mailto:")]

    assert [t for t in relative if not (path.parent / t).exists()] == []


@pytest.mark.parametrize(
    "path",
    [README, ROOT / "bench" / "README.md", *(p for p in pages() if p != BENCHMARKS)],
    ids=lambda p: p.name,
)
def test_figures_appear_only_on_the_benchmarks_page(path: Path) -> None:
    assert figures(path.read_text()) == []


def test_the_figure_pattern_finds_a_quoted_figure() -> None:
    quoted = "windows reach 0.07 x floor (414,000 events/s); 15 us of loop time per record"

    assert figures(quoted) == ["0.07 x floor", "414,000 events/s", "15 us of loop time "]
    assert figures("goal: at least 0.90 x without") == []
    assert len(figures(BENCHMARKS.read_text())) > 10


def test_every_page_is_in_the_navigation() -> None:
    navigation = (ROOT / "mkdocs.yml").read_text()

    assert [page_name(p) for p in pages() if page_name(p) not in navigation] == []
