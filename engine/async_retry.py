"""AsyncRetry: how ``async_map`` retries a call that failed or timed out."""

from __future__ import annotations

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
    operating system. The policy is plain data, checked when the job graph is built.
    """

    attempts: int = 3
    initial_backoff: float = 0.1
    max_backoff: float = 10.0
    multiplier: float = 2.0
    jitter: float = 0.1
    seed: int | None = None

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
        ]
        return [problem for ok, problem in checks if not ok]
