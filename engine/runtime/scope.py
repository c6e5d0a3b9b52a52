"""OperatorScope: which operator instance is running, for error messages."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType

import anyio
from anyio.abc import TaskGroup

from lockgate.engine.errors import OperatorError, RestoreError

__all__ = ["OperatorScope", "run_with_group", "single_error"]


@dataclass(frozen=True, slots=True)
class OperatorScope:
    """One operator's uid in one subtask; turns a user exception into an ``OperatorError``.

    Used as ``with scope: <call user code>``: an exception leaving the block is raised again
    as an ``OperatorError`` naming this operator and subtask, with the original as cause. A
    ``RestoreError`` (restored state that does not fit) leaves as itself: no restart helps.
    """

    uid: str
    subtask_index: int
    parallelism: int

    @property
    def name(self) -> str:
        """The operator instance as ``uid[subtask_index]``."""
        return f"{self.uid}[{self.subtask_index}]"

    def failure(self, error: BaseException) -> OperatorError:
        """Return the ``OperatorError`` to raise ``from error``."""
        return OperatorError(self.uid, self.subtask_index, self.parallelism, error)

    def __enter__(self) -> OperatorScope:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # A restore error already names the operator, and restarting cannot cure it.
        passes = isinstance(error, OperatorError | RestoreError)
        if isinstance(error, Exception) and not passes:
            raise self.failure(error) from error


def single_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """Return the one exception inside nested groups, or the group if there are several."""
    leaves = _leaves(group)
    return leaves[0] if len(leaves) == 1 else group


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


async def run_with_group(body: Callable[[TaskGroup], Awaitable[None]]) -> None:
    """Run ``body(group)`` in a new task group; when it returns, cancel what it started.

    A failure inside the group is raised as itself, not wrapped in an exception group, so
    that supervision reports the original error.
    """
    failure: BaseException | None = None
    try:
        async with anyio.create_task_group() as group:
            await body(group)
            group.cancel_scope.cancel()
    except BaseExceptionGroup as errors:
        failure = single_error(errors)
    if failure is not None:
        raise failure
