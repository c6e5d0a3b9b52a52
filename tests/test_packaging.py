"""The distribution installs three packages under lockgate.*, and nothing else at the top."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
FOLDERS = {
    "actors": "lockgate.actors",
    "engine": "lockgate.engine",
    "connectors": "lockgate.connectors",
}


def declared_packages() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(config["tool"]["setuptools"]["packages"])


def package_folders() -> set[str]:
    found = set()
    for folder, name in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            found.add(".".join((name, *relative.parts)))
    return found


def test_every_package_folder_is_declared_in_pyproject() -> None:
    assert declared_packages() == package_folders()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return next(out.glob("lockgate-*.whl"))


def test_the_wheel_holds_only_the_lockgate_namespace(wheel: Path) -> None:
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}

    assert {top for top in tops if not top.endswith(".dist-info")} == {"lockgate"}


def test_the_wheel_marks_every_package_as_typed(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())

    for package in FOLDERS.values():
        assert f"{package.replace('.', '/')}/py.typed" in names


def test_an_installed_wheel_imports_from_outside_the_repository(
    wheel: Path, tmp_path: Path
) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    code = (
        "import lockgate.engine, lockgate.actors, lockgate.connectors; "
        "print(lockgate.engine.__file__)"
    )

    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path[:0] = [{str(target)!r}]; {code}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )

    assert done.stdout.startswith(str(target))


DASHBOARD_FILES = ("index.html", "dashboard.js", "dashboard.css")


def test_the_wheel_ships_the_dashboard_s_files(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())

    for name in DASHBOARD_FILES:
        assert f"lockgate/engine/web/dashboard/{name}" in names


def test_an_installed_wheel_serves_the_dashboard(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), wheel],
        check=True,
        capture_output=True,
    )
    code = (
        "from starlette.testclient import TestClient; import lockgate.engine.web as web; "
        "client = TestClient(web.rest_app(web.JobRegistry())); "
        f"names = {DASHBOARD_FILES!r}; "
        "print(web.__file__, *(client.get(f'/dashboard/{n}').status_code for n in names))"
    )

    done = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path[:0] = [{str(target)!r}]; {code}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )

    where, *statuses = done.stdout.split()
    assert where.startswith(str(target))
    assert statuses == ["200", "200", "200"]
