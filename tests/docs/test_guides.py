"""The code of the documentation runs.

Every ```python block of a page in docs/ runs, the blocks of one page in order and in one
namespace (a page may build a job in one block and run it in the next), each page in a
fresh module of its own with a new temporary folder as the working directory, so files a
block writes are gone afterwards. A failing block fails the test of its page, naming the page
and the line (tracebacks point into the Markdown file).

A block made only of snippet lines (``--8<-- "examples/x.py"``) shows an example file; the
examples run in tests/examples, so here their files only have to exist (such a block sits
between ``<!-- fmt: off -->`` and ``<!-- fmt: on -->``: ruff's Markdown formatting would
break the ``--8<--`` line). A block marked
``{.python .no-run}`` is shown and not run: NOT_RUN lists each page that has any, how many
and why, so there are only a few and a new one is a decision.

A block that reads a service's address from a ``LOCKGATE_*`` variable (set by
scripts/with-services, as ``make test`` runs it) is left out where that variable is unset:
the page's other blocks still run (so no later block may need what such a block defines),
and then the test is skipped, or fails under CI, as the connector tests do.
"""

from __future__ import annotations

import os
import re
import sys
import types
from pathlib import Path

import pytest

from tests.docs.pages import ROOT, Block, blocks, page_name, pages

NOT_RUN = {
    # Each needs something the tests cannot give it. Keep this short.
    "getting-started/in-a-service.md": 1,  # a web service: it would serve until stopped
}

SERVICE_VARIABLE = re.compile(r"LOCKGATE_[A-Z0-9_]+")

PAGES_WITH_CODE = [path for path in pages() if any(block.runs for block in blocks(path))]


def run_page(page: str, page_blocks: list[Block]) -> None:
    """Run the given blocks of a page in order, in one new module's namespace."""
    name = "docs_" + re.sub(r"\W", "_", page.removesuffix(".md"))
    module = types.ModuleType(name)
    module.__file__ = f"docs/{page}"
    sys.modules[name] = module  # as a script's: its classes can be pickled into checkpoints
    try:
        for block in page_blocks:
            # Blank lines before the code make tracebacks give the line in the page.
            source = "\n" * (block.line - 1) + block.code
            code = compile(source, f"docs/{block.page}", "exec")
            try:
                exec(code, module.__dict__)
            except Exception as error:
                raise AssertionError(f"the block at {block.where} failed: {error!r}") from error
    finally:
        del sys.modules[name]


def missing_services(block: Block) -> list[str]:
    """The LOCKGATE_* variables the block reads that are unset here."""
    return sorted(v for v in set(SERVICE_VARIABLE.findall(block.code)) if not os.environ.get(v))


def report_missing(left_out: list[Block]) -> None:
    variables = sorted({v for block in left_out for v in missing_services(block)})
    where = ", ".join(block.where for block in left_out)
    message = f"{', '.join(variables)} unset, so {where} did not run; run `make test`"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.parametrize("path", PAGES_WITH_CODE, ids=page_name)
def test_the_python_blocks_of_the_page_run_in_order(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runnable = [block for block in blocks(path) if block.runs]
    left_out = [block for block in runnable if missing_services(block)]
    monkeypatch.chdir(tmp_path)

    run_page(page_name(path), [block for block in runnable if block not in left_out])

    if left_out:
        report_missing(left_out)


def test_only_the_listed_pages_have_blocks_that_do_not_run() -> None:
    not_run = {
        page_name(path): count
        for path in pages()
        if (count := sum(b.is_python and not b.runs and not b.included_files for b in blocks(path)))
    }

    assert not_run == NOT_RUN


def test_every_included_file_is_an_example_the_tests_run() -> None:
    included = [
        (block.where, file)
        for path in pages()
        for block in blocks(path)
        for file in block.included_files
    ]

    assert included, "no page shows an example file"
    assert [(where, file) for where, file in included if not (ROOT / file).is_file()] == []
    assert [(where, file) for where, file in included if not file.startswith("examples/")] == []


def test_a_failing_block_names_its_page_and_line() -> None:
    first = Block("page.md", 4, "python", (), "x = 1")
    second = Block("page.md", 8, "python", (), "assert x == 2")

    with pytest.raises(AssertionError, match=r"docs/page\.md:8"):
        run_page("page.md", [first, second])


def test_blocks_are_found_with_their_line_inside_admonitions_too(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n!!! note\n\n    ```python\n    x = 1\n    ```\n")

    found = blocks(page, name="page.md")

    assert [(b.line, b.code, b.runs) for b in found] == [(6, "x = 1", True)]


def test_a_no_run_block_and_a_snippet_block_do_not_run(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        '```{.python .no-run}\nserve()\n```\n\n```python\n--8<-- "examples/word_count.py"\n```\n'
    )

    found = blocks(page, name="page.md")

    assert [(b.runs, b.included_files) for b in found] == [
        (False, []),
        (False, ["examples/word_count.py"]),
    ]
