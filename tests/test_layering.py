"""Imports flow one way: connectors -> engine (public modules) -> actors."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGES = ("actors", "engine", "connectors")

FORBIDDEN = {
    "actors": ("lockgate.engine", "lockgate.connectors"),
    "engine": ("lockgate.connectors",),
    "connectors": ("lockgate.engine.runtime",),
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def edges(package: str) -> list[tuple[str, str]]:
    return [
        (str(path.relative_to(ROOT)), module)
        for path in sorted((ROOT / package).rglob("*.py"))
        for module in sorted(imported_modules(path))
    ]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_imports_against_the_layering(package: str) -> None:
    violations = [
        f"{path} imports {module}"
        for path, module in edges(package)
        if module.startswith(FORBIDDEN[package])
    ]

    assert violations == []


def test_the_checker_sees_a_forbidden_edge(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("from lockgate.engine.runtime.subtask.actor import SubtaskActor\n")

    assert "lockgate.engine.runtime.subtask.actor" in imported_modules(module)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_uses_python_hash_for_routing(package: str) -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / package).rglob("*.py")
        if any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "hash"
            for node in ast.walk(ast.parse(path.read_text()))
        )
    ]

    assert offenders == []
