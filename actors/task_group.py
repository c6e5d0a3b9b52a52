"""Structured-concurrency helpers: run a body in a task group, raise its one real error."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskGroup

__all__ = ["run_with_group", "single_error"]


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
