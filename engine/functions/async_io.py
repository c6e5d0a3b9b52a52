"""The options of an ``async_map`` operator: AsyncMapSpec, AsyncRetry and FailurePolicy.

They are checked when the job graph is built, before any record flows.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from lockgate.engine.errors import GraphError
from lockgate.engine.functions.side_outputs import OutputTag

__all__ = ["AsyncMapSpec", "AsyncRetry", "FailurePolicy", "is_async_callable"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AsyncRetry:
    """Exponential backoff with jitter for the calls of an ``async_map``.

    A record gets at most ``attempts`` calls, the first included. Before retry ``n``
    (``n = 1`` after the first failure) the operator waits
    ``min(max_backoff, initial_backoff * multiplier ** (n - 1))`` seconds on the job's clock,
    scaled by a random factor in ``[1 - jitter, 1 + jitter]`` so that calls that failed
    together do not retry together. ``seed`` makes the factors repeatable (each subtask draws
    from its own generator, seeded with ``seed + subtask_index``); ``None`` seeds from the
    operating system. ``retry_on`` (Flink's retry predicate) picks the errors worth another
    call: a record whose call raised an error it rejects gets no more calls and goes to the
    ``on_failure`` policy at once (a timed-out call raises ``TimeoutError``); ``None``
    retries every error. The policy is checked when the job graph is built.
    """

    attempts: int = 3
    initial_backoff: float = 0.1
    max_backoff: float = 10.0
    multiplier: float = 2.0
    jitter: float = 0.1
    seed: int | None = None
    retry_on: Callable[[Exception], bool] | None = None

    def retries(self, error: Exception, attempt: int) -> bool:
        """Whether a call that raised ``error`` on attempt ``attempt`` (from 1) is made again."""
        return attempt < self.attempts and (self.retry_on is None or self.retry_on(error))

    def backoff(self, retry: int, uniform: float) -> float:
        """Seconds to wait before retry number ``retry`` (from 1), given ``uniform`` in [0, 1).

        ``uniform`` is the random draw, passed in so that the schedule itself is a pure
        function: ``uniform = 0.5`` gives the backoff without jitter.
        """
        base = min(self.max_backoff, self.initial_backoff * self.multiplier ** (retry - 1))
        return max(0.0, base * (1.0 + self.jitter * (2.0 * uniform - 1.0)))

    def problems(self) -> list[str]:
        """Return what is wrong with the policy, one phrase each; empty when it is valid."""
        checks = [
            (self.attempts >= 1, f"attempts must be at least 1; got {self.attempts}"),
            (
                self.initial_backoff >= 0,
                f"initial_backoff must be >= 0; got {self.initial_backoff}",
            ),
            (self.max_backoff >= 0, f"max_backoff must be >= 0; got {self.max_backoff}"),
            (self.multiplier >= 1, f"multiplier must be >= 1; got {self.multiplier}"),
            (0 <= self.jitter <= 1, f"jitter must be between 0 and 1; got {self.jitter}"),
            (
                self.retry_on is None or callable(self.retry_on),
                f"retry_on must be a callable (error) -> bool, or None; got {self.retry_on!r}",
            ),
        ]
        return [problem for ok, problem in checks if not ok]


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
