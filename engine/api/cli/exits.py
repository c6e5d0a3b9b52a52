"""The ``lockgate`` command's exit statuses, and the error a command stops with."""

from __future__ import annotations

from lockgate.engine.errors import EngineError

__all__ = ["EXIT_OK", "EXIT_PROBLEMS", "EXIT_USAGE", "EXPECTED", "CommandError"]

EXIT_OK = 0
"""The command did what was asked; ``check``: the restore would succeed."""

EXIT_PROBLEMS = 1
"""``check``: the restore would fail; ``run``: the job failed; the REST API refused."""

EXIT_USAGE = 2
"""The command could not run: bad arguments, an unreadable savepoint, a bad job, no API."""


class CommandError(Exception):
    """The user asked for something the command cannot do; the message says what to fix.

    ``status`` is the exit status the command ends with (``EXIT_USAGE`` unless told).
    """

    def __init__(self, message: str, *, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status


EXPECTED = (CommandError, EngineError, ValueError, OSError)
"""Errors a command ends with as one line on standard error, never a traceback."""
