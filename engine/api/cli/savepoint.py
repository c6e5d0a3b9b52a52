"""``lockgate savepoint``: look into a savepoint, check a job can restore it, or take one.

::

    lockgate savepoint inspect PATH [--allow-pickle] [--json]
    lockgate savepoint check PATH --job MODULE:ATTR [--allow-non-restored-state]
    lockgate savepoint [trigger] NAME PATH --address URL [--token T]

``PATH`` is a ``_metadata`` file or its folder: a path, a ``file://`` URL or an ``s3://`` URL.
``check`` restores the savepoint as the job would, up to the operators' ``open()``: it reads
every state file, builds each operator with state on its share, and runs its functions'
``open()`` and ``close()``, so a state declared as another kind than it was is found; no
record flows, and sources and sinks are not opened. ``trigger`` (the default action: a first
argument that names no action is a job's name) asks a running job's REST API for a savepoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from typing import Any

import anyio
import click
import orjson

from lockgate.engine.api.cli.exits import EXIT_OK, EXIT_PROBLEMS
from lockgate.engine.api.cli.job_loading import load_job
from lockgate.engine.api.cli.remote import trigger
from lockgate.engine.api.environment import StreamEnvironment
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
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

__all__ = ["savepoint"]

StateLine = tuple[str, str, int, str]  # name, kind, count, noun
PATH_HELP = "a _metadata file or its folder (path, file:// or s3://)"


class _DefaultToTrigger(click.Group):
    """A group whose first argument, when it names no action, is the job of ``trigger``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["trigger", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToTrigger)
def savepoint() -> None:
    """Inspect and check savepoints, or take one of a running job."""


@savepoint.command()
@click.argument("path", metavar="PATH")
@click.option(
    "--allow-pickle",
    is_flag=True,
    help="open pickled checkpoints and pickled values; this runs code: trusted files only",
)
@click.option("--json", "as_json", is_flag=True, help="print JSON")
def inspect(path: str, *, allow_pickle: bool, as_json: bool) -> int:
    """Show what a savepoint or checkpoint holds (PATH: a _metadata file or its folder)."""
    contents = anyio.run(partial(read_snapshot, path, allow_pickle=allow_pickle))
    if as_json:
        click.echo(orjson.dumps(_summary(contents), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo("\n".join(_described(contents)))
    return EXIT_OK


@savepoint.command()
@click.argument("path", metavar="PATH")
@click.option(
    "--job",
    required=True,
    metavar="MODULE:ATTR",
    help="a StreamEnvironment with its job built, or a function returning one",
)
@click.option(
    "--allow-non-restored-state",
    is_flag=True,
    help="drop state of operators the job no longer has, as the restore would",
)
def check(path: str, *, job: str, allow_non_restored_state: bool) -> int:
    """Check whether a job can restore a savepoint (PATH: a _metadata file or its folder)."""
    metadata = anyio.run(read_metadata, path)
    env = load_job(job)
    dropping = allow_non_restored_state
    report = check_restore(
        metadata, env.plan(), env.max_parallelism, allow_non_restored_state=dropping
    )
    if report.ok:  # the metadata fits; so must every state file and every open()
        report = replace(report, problems=anyio.run(partial(_tried, env, path, dropping=dropping)))
    click.echo("\n".join(_judged(metadata, job, report, dropping=dropping)))
    return EXIT_OK if report.ok else EXIT_PROBLEMS


savepoint.add_command(trigger)


async def _tried(env: StreamEnvironment, path: str, *, dropping: bool) -> list[str]:
    # The restore itself, up to the operators' open(): the job's storage decides which
    # pickles may be read, its codec how values decode.
    options = RestoreOptions(allow_non_restored_state=dropping)
    location = absolute_location(path)
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
