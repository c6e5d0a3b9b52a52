"""AsyncMapSpec: the options of an ``async_map`` operator, checked when the graph is built."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from lockgate.engine.async_retry import AsyncRetry
from lockgate.engine.errors import GraphError
from lockgate.engine.side_outputs import OutputTag

__all__ = ["AsyncMapSpec", "FailurePolicy", "is_async_callable"]

FailurePolicy: TypeAlias = (
    Literal["fail", "retry"] | OutputTag[Any] | Callable[[Any, BaseException], Iterable[Any]]
)
"""What ``async_map`` does with a record whose call failed for good (see ``AsyncMapSpec``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AsyncMapSpec:
    """The user function of an ``async_map`` and how its calls are bounded, timed and retried.

    ``function`` is awaited once per record (more with retries). At most ``capacity`` records
    are inside the operator's queue per subtask, called or with a result not yet emitted.
    ``timeout`` bounds each call on the job's clock. ``retry`` retries failed and timed-out
    calls; ``on_failure`` says what happens once a record's calls are spent: ``"fail"``
    fails the job with an ``OperatorError``, ``"retry"`` is ``"fail"`` after the default
    ``AsyncRetry()``, an ``OutputTag`` sends the input record to that side output (read it
    with ``stream.side_output(tag)``; it leaves when its result would have, in the same
    order), and a callable ``(record, error) -> iterable`` gives the records to emit
    instead. ``rate_limit`` caps the calls started per second by the whole operator.
    """

    function: Callable[[Any], Any]
    capacity: int = 100
    timeout: float | None = None
    ordered: bool = True
    retry: AsyncRetry | None = None
    on_failure: FailurePolicy = "fail"
    rate_limit: float | None = None

    @property
    def retry_policy(self) -> AsyncRetry:
        """The retries to make: ``retry``, the default ``AsyncRetry()`` for ``"retry"``, or none."""
        if self.retry is not None:
            return self.retry
        return AsyncRetry() if self.on_failure == "retry" else AsyncRetry(attempts=1)

    @property
    def fallback(self) -> Callable[[Any, BaseException], Iterable[Any]] | None:
        """The callable that replaces a failed record's result, or ``None`` to fail the job."""
        return None if isinstance(self.on_failure, str | OutputTag) else self.on_failure

    @property
    def failure_tag(self) -> OutputTag[Any] | None:
        """The side output failed records go to, or ``None``."""
        return self.on_failure if isinstance(self.on_failure, OutputTag) else None

    def check(self, uid: str) -> None:
        """Raise ``GraphError`` naming ``uid`` for the first invalid option."""
        for problem in self._problems():
            raise GraphError(f"async_map '{uid}': {problem}")

    def _problems(self) -> Iterable[str]:
        if not is_async_callable(self.function):
            yield (
                f"the function must be a coroutine function (async def) or an object with an "
                f"async __call__; got {self.function!r}; for a plain function use map()"
            )
        if not _is_count(self.capacity):
            yield f"capacity must be an int >= 1; got {self.capacity!r}"
        if self.timeout is not None and not self.timeout > 0:
            yield f"timeout must be > 0 seconds, or None for no timeout; got {self.timeout!r}"
        if self.rate_limit is not None and not self.rate_limit > 0:
            yield f"rate_limit must be > 0 calls per second, or None; got {self.rate_limit!r}"
        if not _is_failure_policy(self.on_failure):
            yield (
                "on_failure must be 'fail', 'retry', an OutputTag (a side output for failed "
                f"records) or a callable; got {self.on_failure!r}"
            )
        if self.retry is not None:
            yield from (f"retry: {problem}" for problem in self.retry.problems())


def is_async_callable(function: object) -> bool:
    """Whether calling ``function`` returns a coroutine: ``async def``, or an async ``__call__``."""
    if inspect.iscoroutinefunction(function):
        return True
    call = getattr(type(function), "__call__", None)  # noqa: B004 - the type's, not a bound one
    return not inspect.isfunction(function) and inspect.iscoroutinefunction(call)


def _is_failure_policy(value: object) -> bool:
    return value in ("fail", "retry") or isinstance(value, OutputTag) or callable(value)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
