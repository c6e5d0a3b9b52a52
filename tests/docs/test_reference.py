"""The reference pages document every public name, through the public packages only.

A reference page renders names with mkdocstrings directives (``::: lockgate.engine`` and an
optional ``members:`` list). mkdocstrings leaves out, without a word, a member it cannot
find, so this test loads the packages with griffe, as the docs build does (the .typecheck
tree, the docs' griffe extension), and checks that every name in the ``__all__`` of
``lockgate.engine``, ``lockgate.connectors`` and ``lockgate.actors`` is rendered once and
found. Directives name only the public packages, or one public name of them
(``::: lockgate.engine.run``): deep module paths move.
"""

from __future__ import annotations

import importlib
import re
import sys
import textwrap
from collections import Counter
from pathlib import Path

import griffe
import pytest
import yaml

from tests.docs.pages import DOCS, ROOT, page_name

PUBLIC_PACKAGES = ("lockgate.engine", "lockgate.connectors", "lockgate.actors")
DIRECTIVE_TARGETS = {
    *PUBLIC_PACKAGES,
    "lockgate.engine.state",
    "lockgate.engine.windows",
    "lockgate.engine.testing",
    "lockgate.engine.simulation",
    "lockgate.engine.web",
    "lockgate.engine.errors",
}
DIRECTIVE = re.compile(r"^::: (?P<target>\S+)$")


def directives() -> list[tuple[str, str, list[str] | None]]:
    """Each directive of the reference pages: page, target, members (None: all)."""
    found = []
    for path in sorted((DOCS / "reference").glob("*.md")):
        lines = path.read_text().splitlines()
        for index, line in enumerate(lines):
            if match := DIRECTIVE.match(line):
                found.append((page_name(path), match["target"], members(lines[index + 1 :])))
    return found


def members(lines: list[str]) -> list[str] | None:
    block = []
    for line in lines:
        if line and not line.startswith(" "):
            break
        block.append(line)
    options = (yaml.safe_load(textwrap.dedent("\n".join(block))) or {}).get("options", {})
    listed = options.get("members")
    return None if listed is None else list(listed)


def public_name(target: str) -> tuple[str, str] | None:
    """(package, name) when a directive names one public name of a public package."""
    package, _, name = target.rpartition(".")
    is_public = package in PUBLIC_PACKAGES and name in importlib.import_module(package).__all__
    return (package, name) if is_public else None


def rendered_objects(target: str, listed: list[str] | None) -> list[object]:
    if (named := public_name(target)) is not None:
        return [getattr(importlib.import_module(named[0]), named[1])]
    module = importlib.import_module(target)
    return [getattr(module, name) for name in (module.__all__ if listed is None else listed)]


def rendered_names() -> Counter[tuple[str, str]]:
    """(package, name) for every public name some directive renders."""
    rendered: Counter[tuple[str, str]] = Counter()
    for _, target, listed in directives():
        for value in rendered_objects(target, listed):
            for package in PUBLIC_PACKAGES:
                exported = importlib.import_module(package)
                rendered.update(
                    (package, name) for name in exported.__all__ if getattr(exported, name) is value
                )
    return rendered


@pytest.fixture(scope="module")
def loaded() -> dict[str, griffe.Module]:
    sys.path.insert(0, str(DOCS))
    try:
        from lazy_exports import LazyExports  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(DOCS))
    loader = griffe.GriffeLoader(
        search_paths=[str(ROOT / ".typecheck")],
        extensions=griffe.load_extensions(LazyExports()),
    )
    modules = {target: loader.load(target) for target in DIRECTIVE_TARGETS}
    assert all(isinstance(module, griffe.Module) for module in modules.values())
    loader.resolve_aliases()
    return modules  # type: ignore[return-value]


def test_directives_name_only_the_public_packages() -> None:
    targets = {target for _, target, _ in directives()}

    assert {t for t in targets if t not in DIRECTIVE_TARGETS and public_name(t) is None} == set()


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_every_public_name_is_rendered_exactly_once(package: str) -> None:
    rendered = rendered_names()
    exported = importlib.import_module(package).__all__

    counts = {name: rendered[package, name] for name in exported}

    assert {name: count for name, count in counts.items() if count != 1} == {}


def test_every_rendered_name_is_found_as_the_docs_build_finds_it(
    loaded: dict[str, griffe.Module],
) -> None:
    wanted = []
    for page, target, listed in directives():
        if (named := public_name(target)) is not None:
            wanted.append((page, loaded[named[0]], named[1]))
            owner = loaded[named[0]].members.get(named[1])
        else:
            owner = loaded[target]
        wanted.extend((page, owner, name) for name in listed or [])

    missing = [
        f"{page}: {owner.path}.{name}" for page, owner, name in wanted if not found(owner, name)
    ]

    assert missing == []


def found(owner: griffe.Object | griffe.Alias | None, name: str) -> bool:
    """Whether griffe finds ``name`` in ``owner``, as the docs build looks it up.

    Today ``lockgate.engine.run`` is also a module (engine/run.py), which griffe finds before
    the function of that name; its page lists the function as the module's member.
    """
    member = None if owner is None else owner.members.get(name)
    if not isinstance(member, griffe.Alias):
        return member is not None
    try:
        return member.final_target is not None
    except griffe.AliasResolutionError:
        return False


def test_the_docs_tree_of_symlinks_exists() -> None:
    tree = ROOT / ".typecheck" / "lockgate"
    assert all(Path(tree, package).is_dir() for package in ("engine", "actors", "connectors")), (
        "run `make .typecheck/lockgate` (make docs and make test do)"
    )
