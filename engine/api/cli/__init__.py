"""The ``lockgate`` command: run jobs, control them through their REST API, read savepoints.

::

    lockgate run MODULE:ATTR [--name N] [--restore latest|PATH] [--if-missing start]
                 [--rest HOST:PORT] [--token T] [--parallelism N] [--savepoint-on-stop PATH]
    lockgate list --address URL
    lockgate status NAME --address URL
    lockgate savepoint NAME PATH --address URL
    lockgate stop NAME --savepoint PATH [--drain] --address URL
    lockgate cancel NAME --address URL
    lockgate savepoint inspect PATH [--allow-pickle] [--json]
    lockgate savepoint check PATH --job MODULE:ATTR [--allow-non-restored-state]
    lockgate simulate SCENARIO [--html PATH] [--json PATH] [--seed N] [--until SECONDS]

Exit status: 0 on success (for ``check``: the restore would succeed), 1 when ``check``
finds problems, a job that ``run`` runs fails, or the REST API refuses a request, 2 when
the command cannot run (bad arguments, an unreadable savepoint, a module that names no job,
an address that does not answer); errors are one line on standard error.
"""

from __future__ import annotations

import click

from lockgate.engine.api.cli.exits import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    EXPECTED,
    CommandError,
)
from lockgate.engine.api.cli.remote import cancel, list_jobs, status, stop
from lockgate.engine.api.cli.runner import run_command
from lockgate.engine.api.cli.savepoint import savepoint
from lockgate.engine.api.cli.simulate import simulate

__all__ = ["EXIT_OK", "EXIT_PROBLEMS", "EXIT_USAGE", "lockgate", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def lockgate() -> None:
    """Run lockgate jobs, control them through their REST API, read savepoints."""


for _command in (run_command, list_jobs, status, savepoint, stop, cancel, simulate):
    lockgate.add_command(_command)


def main(argv: list[str] | None = None) -> int:
    """Run the ``lockgate`` command with ``argv`` (default: ``sys.argv[1:]``); return its status."""
    try:
        result = lockgate.main(args=argv, prog_name="lockgate", standalone_mode=False)
    except click.ClickException as error:  # bad arguments: click prints the usage and why
        error.show()
        return EXIT_USAGE
    except click.Abort:
        return EXIT_USAGE
    except EXPECTED as error:
        click.echo(f"lockgate: error: {error}", err=True)
        return error.status if isinstance(error, CommandError) else EXIT_USAGE
    return result if isinstance(result, int) else EXIT_OK
