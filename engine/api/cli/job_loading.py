"""load_job: the ``StreamEnvironment`` a ``MODULE:ATTR`` names, for ``run`` and ``check``.

``MODULE`` is a module name (imported with the current folder searched first) or the path
of a Python file (``examples/tail_counts.py``, imported under its file name). ``ATTR`` names
a ``StreamEnvironment`` with its job built, or a function that returns one; ``--parallelism``
calls that function with ``parallelism=N``.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from lockgate.engine.api.cli.exits import CommandError
from lockgate.engine.api.environment import StreamEnvironment

__all__ = ["default_job_name", "load_job"]


def load_job(
    spec: str, *, option: str = "--job", parallelism: int | None = None
) -> StreamEnvironment:
    """Import ``spec``'s module and return its environment, built with ``parallelism`` if given.

    Raises:
        CommandError: a spec that is not ``MODULE:ATTR``, a module that cannot be imported,
            an attribute it lacks, a function that raised or returned no environment, or
            ``parallelism`` for an attribute that takes none.
    """
    module_name, attribute = _split(spec, option)
    value = _attribute(_imported(module_name, option), attribute, f"{option} {spec}")
    if isinstance(value, StreamEnvironment):
        if parallelism is not None:
            raise CommandError(
                f"{option} {spec} is a StreamEnvironment built already; --parallelism needs a "
                "function with a keyword argument 'parallelism' that builds the job"
            )
        return value
    if callable(value):
        value = _called(value, f"{option} {spec}", parallelism)
    if not isinstance(value, StreamEnvironment):
        raise CommandError(
            f"{option} {spec} is a {type(value).__name__}, not a StreamEnvironment; name the "
            "environment the job is built on, or a function taking no argument that returns it"
        )
    return value


def default_job_name(spec: str) -> str:
    """The job name ``run`` uses without ``--name``: the module's last part (``tail_counts``)."""
    module_name = spec.partition(":")[0]
    if _is_path(module_name):
        return Path(module_name).stem
    return module_name.rpartition(".")[2]


def _split(spec: str, option: str) -> tuple[str, str]:
    module_name, _, attribute = spec.rpartition(":")
    if not module_name or not attribute:
        raise CommandError(
            f"{option} {spec!r} is not MODULE:ATTR; name a module and, after a colon, the "
            f"StreamEnvironment in it (or a function returning one), e.g. {option} myjobs:env"
        )
    return module_name, attribute


def _is_path(module_name: str) -> bool:
    return module_name.endswith(".py") or os.sep in module_name


def _imported(module_name: str, option: str) -> ModuleType:
    try:
        if _is_path(module_name):
            return _imported_file(Path(module_name), option)
        with _current_folder_on_path():
            return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise CommandError(
            f"cannot import the module '{module_name}' of {option} ({error}); run lockgate from "
            "the folder that holds it, or add that folder to PYTHONPATH"
        ) from error
    except CommandError:
        raise
    except Exception as error:  # the user's module: any error it raises ends the command
        raise CommandError(
            f"importing the module '{module_name}' of {option} failed: {error!r}"
        ) from error


def _imported_file(path: Path, option: str) -> ModuleType:
    if not path.is_file():
        raise CommandError(f"{option}: there is no file '{path}'; check the path")
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, "a .py file always has a loader"
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as when run as a script: its classes pickle by this name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _attribute(module: ModuleType, attribute: str, where: str) -> Any:
    value: Any = module
    for name in attribute.split("."):
        if not hasattr(value, name):
            raise CommandError(f"{where}: the module '{module.__name__}' has no '{attribute}'")
        value = getattr(value, name)
    return value


def _called(function: Callable[..., Any], where: str, parallelism: int | None) -> Any:
    arguments: dict[str, Any] = {}
    if parallelism is not None:
        if "parallelism" not in _parameters(function):
            raise CommandError(
                f"{where} takes no keyword argument 'parallelism', so --parallelism cannot be "
                "given to it; add `parallelism: int = 1` to the function and build with it"
            )
        arguments["parallelism"] = parallelism
    try:
        return function(**arguments)
    except Exception as error:  # the user's function: any error it raises ends the command
        raise CommandError(f"{where}: calling it failed: {error!r}") from error


def _parameters(function: Callable[..., Any]) -> set[str]:
    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):  # a callable without a signature takes no keywords we know
        return set()


@contextmanager
def _current_folder_on_path() -> Iterator[None]:
    # The console script's sys.path starts with its own folder, not the current one.
    folder = os.getcwd()
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        if added:
            sys.path.remove(folder)
