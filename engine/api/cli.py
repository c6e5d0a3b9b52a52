"""The ``lockgate`` command: look into a savepoint, and check a job can restore it.

::

    lockgate savepoint inspect PATH [--allow-pickle] [--json]
    lockgate savepoint check PATH --job module:attr [--allow-non-restored-state]
    lockgate simulate SCENARIO.toml [--html PATH] [--json PATH]   (lockgate.engine.simulation.cli)

``PATH`` is a ``_metadata`` file or its folder: a path, a ``file://`` URL or an ``s3://`` URL.
``--job`` names a ``StreamEnvironment`` with its job built, or a function taking no argument
that returns one; its module is imported (the current folder is searched first), which runs
its code. ``check`` then restores the savepoint as the job would, up to the operators'
``open()``: it reads every state file, builds each operator with state on its share, and
runs its functions' ``open()`` and ``close()``, so a state declared as another kind than it
was is found; no record flows, and sources and sinks are not opened.

Exit status: 0 on success (for ``check``: the restore would succeed), 1 when ``check`` finds
problems, 2 when the command cannot run (bad arguments, an unreadable savepoint, a ``--job``
that names no job); errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from types import ModuleType
from typing import Any

import anyio
import orjson

from lockgate.engine.api.environment import StreamEnvironment
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.errors import EngineError
from lockgate.engine.restore.compatibility import (
    OperatorMapping,
    RestoreReport,
    check_restore,
    snapshot_name,
)
from lockgate.engine.restore.reader import (
    OperatorContents,
    SnapshotContents,
    absolute_location,
    read_metadata,
    read_snapshot,
)
from lockgate.engine.restore.resolve import RestoreOptions, resolve_restore
from lockgate.engine.runtime.job.trial_restore import trial_restore
from lockgate.engine.simulation import cli as simulation_cli

__all__ = ["EXIT_OK", "EXIT_PROBLEMS", "EXIT_USAGE", "main"]

EXIT_OK = 0
"""The command did what was asked; ``check``: the restore would succeed."""

EXIT_PROBLEMS = 1
"""``check``: the restore would fail; the problems are printed."""

EXIT_USAGE = 2
"""The command could not run: bad arguments, an unreadable savepoint, a bad ``--job``."""

StateLine = tuple[str, str, int, str]  # name, kind, count, noun


class _UsageError(Exception):
    """The user asked for something the command cannot do; the message says what to fix."""


_EXPECTED = (_UsageError, EngineError, ValueError, OSError)


def main(argv: list[str] | None = None) -> int:
    """Run the ``lockgate`` command with ``argv`` (default: ``sys.argv[1:]``); return its status."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exit_:  # argparse has printed the usage, or the help
        return EXIT_USAGE if exit_.code else EXIT_OK
    command: Callable[[argparse.Namespace], int] = args.command
    try:
        return command(args)
    except _EXPECTED as error:
        print(f"lockgate: error: {error}", file=sys.stderr)
        return EXIT_USAGE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lockgate", description="lockgate stream processing")
    commands = parser.add_subparsers(title="commands", required=True)
    savepoint = commands.add_parser("savepoint", help="inspect and check savepoints")
    actions = savepoint.add_subparsers(title="actions", required=True)
    _add_inspect(actions)
    _add_check(actions)
    simulate = commands.add_parser("simulate", help="run a scenario file on virtual time")
    simulation_cli.add_arguments(simulate)
    simulate.set_defaults(command=simulation_cli.simulate)
    return parser


def _add_inspect(actions: Any) -> None:
    inspect = actions.add_parser("inspect", help="show what a savepoint or checkpoint holds")
    inspect.add_argument("path", help="a _metadata file or its folder (path, file:// or s3://)")
    inspect.add_argument(
        "--allow-pickle",
        action="store_true",
        help="open pickled checkpoints and pickled values; this runs code: trusted files only",
    )
    inspect.add_argument("--json", action="store_true", help="print JSON")
    inspect.set_defaults(command=_inspect)


def _add_check(actions: Any) -> None:
    check = actions.add_parser("check", help="check whether a job can restore a savepoint")
    check.add_argument("path", help="a _metadata file or its folder (path, file:// or s3://)")
    check.add_argument(
        "--job",
        required=True,
        metavar="MODULE:ATTR",
        help="a StreamEnvironment with its job built, or a function returning one",
    )
    check.add_argument(
        "--allow-non-restored-state",
        action="store_true",
        help="drop state of operators the job no longer has, as the restore would",
    )
    check.set_defaults(command=_check)


def _inspect(args: argparse.Namespace) -> int:
    contents = anyio.run(partial(read_snapshot, args.path, allow_pickle=args.allow_pickle))
    if args.json:
        print(orjson.dumps(_summary(contents), option=orjson.OPT_INDENT_2).decode())
    else:
        print("\n".join(_described(contents)))
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    metadata = anyio.run(read_metadata, args.path)
    env = _load_job(args.job)
    report = check_restore(
        metadata,
        env.plan(),
        env.max_parallelism,
        allow_non_restored_state=args.allow_non_restored_state,
    )
    if report.ok:  # the metadata fits; so must every state file and every open()
        report = replace(report, problems=anyio.run(_tried, env, args))
    dropping = args.allow_non_restored_state
    print("\n".join(_judged(metadata, args.job, report, dropping=dropping)))
    return EXIT_OK if report.ok else EXIT_PROBLEMS


async def _tried(env: StreamEnvironment, args: argparse.Namespace) -> list[str]:
    # The restore itself, up to the operators' open(): the job's storage decides which
    # pickles may be read, its codec how values decode.
    options = RestoreOptions(allow_non_restored_state=args.allow_non_restored_state)
    location = absolute_location(args.path)
    restore = await resolve_restore(env.checkpoint_storage, "", location, options)
    assert restore is not None, "a location always resolves to a snapshot"
    return await trial_restore(
        restore,
        env.plan(),
        env.max_parallelism,
        codec=env._savepoint_codec(),
        clock=env.clock,
    )


def _summary(contents: SnapshotContents) -> dict[str, Any]:
    return {
        "location": contents.location,
        "job_name": contents.job_name,
        "checkpoint_id": contents.checkpoint_id,
        "is_savepoint": contents.is_savepoint,
        "max_parallelism": contents.max_parallelism,
        "operators": [
            {
                "uid": operator.uid,
                "parallelism": operator.parallelism,
                "size_bytes": operator.size_bytes,
                "key_count": operator.key_count,
                "states": [
                    {"name": name, "kind": kind, "count": count}
                    for name, kind, count, _ in _states(operator)
                ],
            }
            for operator in contents.operators.values()
        ],
    }


def _described(contents: SnapshotContents) -> Iterator[str]:
    yield f"job:             {contents.job_name}"
    yield f"checkpoint id:   {contents.checkpoint_id}"
    yield f"type:            {'savepoint' if contents.is_savepoint else 'checkpoint'}"
    yield f"max parallelism: {contents.max_parallelism}"
    yield f"location:        {contents.location}"
    yield ""
    for operator in contents.operators.values():
        yield (
            f"operator '{operator.uid}': parallelism {operator.parallelism}, "
            f"{operator.size_bytes} bytes"
        )
        states = _states(operator)
        yield from (f"  {name}: {kind}, {_counted(n, noun)}" for name, kind, n, noun in states)
        if not states:
            yield "  no state"


def _states(operator: OperatorContents) -> list[StateLine]:
    keyed = [
        (name, f"keyed {operator.kinds.get(name, 'state')}", len(table), "key")
        for name, table in operator.keyed.items()
    ]
    lists = [(name, "operator list", len(v), "entry") for name, v in operator.lists.items()]
    unions = [(name, "union list", len(v), "entry") for name, v in operator.unions.items()]
    broadcast = [(name, "broadcast", len(t), "entry") for name, t in operator.broadcast.items()]
    return [*keyed, *lists, *unions, *broadcast]


def _judged(
    metadata: CheckpointMetadata, job: str, report: RestoreReport, *, dropping: bool
) -> Iterator[str]:
    yield f"{snapshot_name(metadata)} of job '{metadata.job_name}' into the job {job}:"
    yield from (f"  '{entry.uid}': {_mapped(entry, dropping=dropping)}" for entry in report.mapping)
    yield from (f"  '{uid}': no state, starts empty" for uid in report.starting_empty)
    if report.ok:
        yield "the restore would succeed"
        return
    yield f"the restore would fail ({_counted(len(report.problems), 'problem')}):"
    yield from (f"  - {problem}" for problem in report.problems)


def _mapped(entry: OperatorMapping, *, dropping: bool) -> str:
    if entry.new_parallelism is None:
        fate = "state dropped" if dropping else "state not restored"
        return f"parallelism {entry.old_parallelism} -> no such operator, {fate}"
    change = " (rescaled)" if entry.rescaled else ""
    return f"parallelism {entry.old_parallelism} -> {entry.new_parallelism}{change}"


def _counted(count: int, noun: str) -> str:
    plural = {"entry": "entries"}.get(noun, f"{noun}s")
    return f"{count} {noun if count == 1 else plural}"


def _load_job(spec: str) -> StreamEnvironment:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise _UsageError(
            f"--job {spec!r} is not MODULE:ATTR; name a module and, after a colon, the "
            "StreamEnvironment in it (or a function returning one), e.g. --job myjobs:env"
        )
    value = _attribute(_imported(module_name), attribute, spec)
    if callable(value) and not isinstance(value, StreamEnvironment):
        value = _called(value, spec)
    if not isinstance(value, StreamEnvironment):
        raise _UsageError(
            f"--job {spec} is a {type(value).__name__}, not a StreamEnvironment; name the "
            "environment the job is built on, or a function taking no argument that returns it"
        )
    return value


def _imported(module_name: str) -> ModuleType:
    try:
        with _current_folder_on_path():
            return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise _UsageError(
            f"cannot import the module '{module_name}' of --job ({error}); run lockgate from "
            "the folder that holds it, or add that folder to PYTHONPATH"
        ) from error
    except Exception as error:  # the user's module: any error it raises ends the command
        raise _UsageError(
            f"importing the module '{module_name}' of --job failed: {error!r}"
        ) from error


def _attribute(module: ModuleType, attribute: str, spec: str) -> Any:
    value: Any = module
    for name in attribute.split("."):
        if not hasattr(value, name):
            raise _UsageError(f"--job {spec}: the module '{module.__name__}' has no '{attribute}'")
        value = getattr(value, name)
    return value


def _called(function: Callable[[], Any], spec: str) -> Any:
    try:
        return function()
    except Exception as error:  # the user's function: any error it raises ends the command
        raise _UsageError(f"--job {spec}: calling it failed: {error!r}") from error


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


if __name__ == "__main__":
    raise SystemExit(main())
