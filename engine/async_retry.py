"""AsyncRetry: how ``async_map`` retries a call that failed or timed out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["AsyncRetry"]


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
