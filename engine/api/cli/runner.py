"""``lockgate run MODULE:ATTR``: run a job in this process until it ends or is stopped.

The job is the ``StreamEnvironment`` that ``MODULE:ATTR`` names (see ``job_loading``), run
under ``--name`` (default: the module's last part). Once started it prints one line, the
*ready line*: ``lockgate: job 'NAME' started`` and, with ``--rest``, ``; REST API at URL``
with the port the server bound (``--rest 127.0.0.1:0`` takes any free port). SIGTERM or
SIGINT stops the job with a savepoint under ``--savepoint-on-stop`` (its folder is printed:
``lockgate: savepoint FOLDER``), or cancels it without that option; a second signal cancels
at once. The last line says how the job ended. Exit status 0 when the job finished, was
stopped or cancelled; 1 when it failed (its error on standard error) or its stop savepoint
failed; 2 when the command could not start it.
"""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial

import anyio
import click

from lockgate.engine.api.cli.exits import EXIT_OK, EXIT_PROBLEMS, CommandError
from lockgate.engine.api.cli.job_loading import default_job_name, load_job
from lockgate.engine.api.cli.progress import show_progress
from lockgate.engine.api.client import JobClient
from lockgate.engine.api.environment import StreamEnvironment
from lockgate.engine.api.run import run
from lockgate.engine.checkpointing.storage import savepoint_folder_for
from lockgate.engine.errors import JobError
from lockgate.engine.restore.resolve import IfMissing
from lockgate.engine.web.registry import JobRegistry

__all__ = ["RunSettings", "run_command", "run_job"]

Signals = AsyncIterator[int]


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What ``lockgate run`` was asked, past parsing: how to start, serve and stop the job."""

    name: str
    restore: str | None = None
    if_missing: IfMissing = "fail"
    allow_non_restored_state: bool = False
    rest: tuple[str, int] | None = None
    token: str | None = None
    savepoint_on_stop: str | None = None
    progress: bool = False


@click.command("run")
@click.argument("job", metavar="MODULE:ATTR")
@click.option("--name", help="the job's name (default: the module's last part)")
@click.option("--restore", metavar="latest|PATH", help="start from a savepoint or checkpoint")
@click.option(
    "--if-missing",
    type=click.Choice(["fail", "start"]),
    default="fail",
    show_default=True,
    help="with --restore: what to do when there is nothing to restore",
)
@click.option(
    "--allow-non-restored-state",
    is_flag=True,
    help="drop restored state of operators the job no longer has",
)
@click.option("--rest", metavar="HOST:PORT", help="serve the REST API there (port 0: any)")
@click.option("--token", envvar="LOCKGATE_TOKEN", help="bearer token the REST API's POSTs need")
@click.option(
    "--parallelism",
    type=click.IntRange(min=1),
    help="call the job's function with parallelism=N",
)
@click.option(
    "--savepoint-on-stop",
    metavar="PATH",
    help="on SIGTERM or SIGINT, stop with a savepoint under PATH",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="draw a progress bar (default: on a terminal, for sources that know their size)",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="warning",
    show_default=True,
    help="log records from this level on go to standard error",
)
def run_command(  # noqa: PLR0913 - the command's options
    job: str,
    *,
    name: str | None,
    restore: str | None,
    if_missing: IfMissing,
    allow_non_restored_state: bool,
    rest: str | None,
    token: str | None,
    parallelism: int | None,
    savepoint_on_stop: str | None,
    progress: bool | None,
    log_level: str,
) -> int:
    """Run the job MODULE:ATTR names until it ends or is stopped."""
    if savepoint_on_stop is not None:
        savepoint_folder_for(savepoint_on_stop)  # a bad target fails now, not at the stop
    settings = RunSettings(
        name=name or default_job_name(job),
        restore=restore,
        if_missing=if_missing,
        allow_non_restored_state=allow_non_restored_state,
        rest=None if rest is None else _address(rest),
        token=token,
        savepoint_on_stop=savepoint_on_stop,
        progress=sys.stdout.isatty() if progress is None else progress,
    )
    env = load_job(job, option="MODULE:ATTR", parallelism=parallelism)
    logging.basicConfig(level=log_level.upper(), stream=sys.stderr)
    return run(partial(run_job, env, settings))


async def run_job(env: StreamEnvironment, settings: RunSettings) -> int:
    """Start the job, serve it if asked, print the ready line, and follow it to its end."""
    registry = JobRegistry()
    async with env.start(
        settings.name,
        restore_from=settings.restore,
        if_missing=settings.if_missing,
        allow_non_restored_state=settings.allow_non_restored_state,
    ) as job:
        registry.add(job)
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with _served(registry, settings) as url:
                where = f"; REST API at {url}" if url else ""
                click.echo(f"lockgate: job '{job.name}' started{where}")  # signals are ours now
                return await _followed(job, settings, signals)


@dataclass
class _Stop:
    """The stop a signal asked for: done once its savepoint was taken (or failed)."""

    asked: bool = False
    failed: bool = False
    done: anyio.Event = field(default_factory=anyio.Event)


async def _followed(job: JobClient, settings: RunSettings, signals: Signals) -> int:
    stop = _Stop()
    async with anyio.create_task_group() as group:
        group.start_soon(_on_signals, job, settings, stop, signals)
        if settings.progress:
            group.start_soon(show_progress, job, sys.stdout)
        try:
            result = await job.wait()
        except Exception as error:  # the job's error: reported, then the exit status
            failure: Exception | None = error
        else:
            failure = None
            if stop.asked:
                await stop.done.wait()
        group.cancel_scope.cancel()  # the progress bar draws its last state before the end
    if failure is not None:
        click.echo(f"lockgate: error: job '{job.name}' failed: {failure}", err=True)
        return EXIT_PROBLEMS
    click.echo(f"lockgate: job '{job.name}' {result.status.name}")
    return EXIT_PROBLEMS if stop.failed else EXIT_OK


async def _on_signals(job: JobClient, settings: RunSettings, stop: _Stop, signals: Signals) -> None:
    async with anyio.create_task_group() as stopping:  # a stop goes on while signals come
        async for received in signals:
            name = signal.Signals(received).name
            if stop.asked or settings.savepoint_on_stop is None:
                click.echo(f"lockgate: {name}: cancelling job '{job.name}'")
                job.cancel()
                continue
            stop.asked = True
            click.echo(f"lockgate: {name}: stopping job '{job.name}' with a savepoint")
            stopping.start_soon(_stop_with_savepoint, job, settings.savepoint_on_stop, stop)


async def _stop_with_savepoint(job: JobClient, path: str, stop: _Stop) -> None:
    try:
        folder = await job.stop_with_savepoint(path)
    except JobError as error:  # the savepoint failed, or the job failed or ended meanwhile
        click.echo(f"lockgate: error: the stop failed ({error}); cancelling", err=True)
        stop.failed = True
        job.cancel()
    else:
        click.echo(f"lockgate: savepoint {folder}")
    finally:
        stop.done.set()


@asynccontextmanager
async def _served(registry: JobRegistry, settings: RunSettings) -> AsyncIterator[str | None]:
    if settings.rest is None:
        yield None
        return
    try:
        from lockgate.engine.web.server import serve
    except ImportError as error:
        raise CommandError(
            f"--rest needs the extra 'web' ({error}): pip install 'lockgate[web]'"
        ) from error
    host, port = settings.rest
    async with serve(registry, host=host, port=port, token=settings.token) as server:
        yield server.url


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise CommandError(
            f"--rest {text!r} is not HOST:PORT; give a host and a port from 0 (any free one) to "
            "65535, e.g. --rest 127.0.0.1:8081"
        )
    return host, int(port)
