"""RestartStrategy: whether and when a failed job restarts, as Flink decides it.

A strategy is frozen configuration; ``strategy.tracker()`` returns a ``RestartTracker``, the
plain synchronous state of one job run: the job master reports each failure with the time it
happened and waits the returned delay (or gives up on ``None``). No event loop, no clock of
its own: time is always passed in.
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, field

__all__ = [
    "ExponentialDelayRestart",
    "FailureRateRestart",
    "FixedDelayRestart",
    "NoRestart",
    "RestartStatistics",
    "RestartStrategy",
    "RestartTracker",
]


class RestartStrategy(ABC):
    """How a failed job restarts; build one with the constructors below.

    ``none()`` never restarts; ``fixed_delay`` restarts a fixed number of times;
    ``exponential_delay`` restarts with a growing delay (the default when checkpointing is on);
    ``failure_rate`` restarts unless too many failures fall into one interval. A strategy is
    immutable and may be shared by many jobs: each run takes its own ``tracker()``.
    """

    __slots__ = ()

    @staticmethod
    def none() -> NoRestart:
        """Never restart: the first failure fails the job."""
        return NoRestart()

    @staticmethod
    def fixed_delay(attempts: int, delay: float) -> FixedDelayRestart:
        """Restart up to ``attempts`` times in the job's life, each ``delay`` seconds later."""
        return FixedDelayRestart(attempts=attempts, delay=delay)

    @staticmethod
    def exponential_delay(
        initial_delay: float = 1.0,
        max_delay: float = 60.0,
        multiplier: float = 2.0,
        reset_after: float = 3600.0,
        jitter: float = 0.1,
        attempts: int | None = None,
        *,
        rng: random.Random | None = None,
    ) -> ExponentialDelayRestart:
        """Restart after a delay that grows by ``multiplier`` per failure, up to ``max_delay``.

        Flink 1.19+ uses this strategy by default when checkpointing is enabled, and so does
        lockgate. The delay returns to ``initial_delay`` (and the attempt count to zero) once
        the job ran ``reset_after`` seconds past its last restart without failing. ``jitter``
        adds a random ±fraction of the delay, drawn from ``rng`` (inject a seeded
        ``random.Random`` for repeatable runs). ``attempts`` bounds the restarts between two
        resets; ``None`` means no bound. Flink 1.19+ defaults to a 1.5 multiplier; lockgate
        keeps 2.0.
        """
        return ExponentialDelayRestart(
            initial_delay=initial_delay,
            max_delay=max_delay,
            multiplier=multiplier,
            reset_after=reset_after,
            jitter=jitter,
            attempts=attempts,
            rng=rng,
        )

    @staticmethod
    def failure_rate(max_failures: int, interval: float, delay: float) -> FailureRateRestart:
        """Restart after ``delay`` seconds unless over ``max_failures`` fall in ``interval``."""
        return FailureRateRestart(max_failures=max_failures, interval=interval, delay=delay)

    @abstractmethod
    def tracker(self) -> RestartTracker:
        """Return fresh restart bookkeeping for one run of a job."""


@dataclass(frozen=True, slots=True)
class RestartStatistics:
    """What a tracker has seen: failures reported, restarts granted, whether it gave up."""

    failures: int
    restarts: int
    gave_up: bool


class RestartTracker(ABC):
    """The restart state of one job run: fed failures, it answers how long to wait.

    ``on_failure`` returns the seconds to wait before restarting, or ``None`` once the
    strategy gives up; every answer after a ``None`` is ``None`` too. Times are seconds on the
    caller's monotonic clock.
    """

    def __init__(self) -> None:
        self._failures = 0
        self._restarts = 0
        self._gave_up = False

    def on_failure(self, now: float) -> float | None:
        """Record a failure at ``now``; return the delay before restarting, or ``None``."""
        self._failures += 1
        delay = None if self._gave_up else self._delay_after_failure(now)
        if delay is None:
            self._gave_up = True
        else:
            self._restarts += 1
        return delay

    def on_success(self, now: float) -> None:  # noqa: B027 -- a hook, empty unless a strategy resets
        """Note that the job has been running without failure until ``now``.

        Only exponential delay resets on a long healthy run; the other strategies count
        failures over the job's whole life, as Flink's do.
        """

    def statistics(self) -> RestartStatistics:
        """Return the failures and restarts seen so far."""
        return RestartStatistics(self._failures, self._restarts, self._gave_up)

    @abstractmethod
    def _delay_after_failure(self, now: float) -> float | None: ...

    def __repr__(self) -> str:
        name = type(self).__name__
        return (
            f"<{name} failures={self._failures} restarts={self._restarts} gave_up={self._gave_up}>"
        )


@dataclass(frozen=True, slots=True, repr=False)
class NoRestart(RestartStrategy):
    """Never restarts: the first failure fails the job."""

    def tracker(self) -> RestartTracker:
        """Return a tracker that gives up at once."""
        return _NoRestartTracker()

    def __repr__(self) -> str:
        return "RestartStrategy.none()"


class _NoRestartTracker(RestartTracker):
    def _delay_after_failure(self, now: float) -> float | None:
        return None


@dataclass(frozen=True, slots=True, repr=False)
class FixedDelayRestart(RestartStrategy):
    """Restarts at most ``attempts`` times in a job's life, ``delay`` seconds after a failure.

    The count never resets: the failure after the last allowed restart fails the job.
    """

    attempts: int
    delay: float

    def __post_init__(self) -> None:
        _require(self.attempts >= 0, f"attempts must be at least 0; got {self.attempts}")
        _require(self.delay >= 0, f"delay must be at least 0 seconds; got {self.delay}")

    def tracker(self) -> RestartTracker:
        """Return a tracker counting restarts against ``attempts``."""
        return _FixedDelayTracker(self)

    def __repr__(self) -> str:
        return f"RestartStrategy.fixed_delay(attempts={self.attempts}, delay={self.delay})"


class _FixedDelayTracker(RestartTracker):
    def __init__(self, strategy: FixedDelayRestart) -> None:
        super().__init__()
        self._strategy = strategy

    def _delay_after_failure(self, now: float) -> float | None:
        return self._strategy.delay if self._restarts < self._strategy.attempts else None


@dataclass(frozen=True, slots=True, repr=False)
class ExponentialDelayRestart(RestartStrategy):
    """Restarts after exponentially growing delays, reset by a long enough healthy run.

    The n-th restart since the last reset waits ``initial_delay * multiplier ** (n - 1)``,
    plus or minus ``jitter`` of it, clamped to ``[initial_delay, max_delay]``. A failure
    before the scheduled restart merges into that restart (Flink's rule): it waits only the
    remaining time and counts no attempt. Running ``reset_after`` seconds past the scheduled
    restart without failing resets the delay and the attempt count.
    """

    initial_delay: float = 1.0
    max_delay: float = 60.0
    multiplier: float = 2.0
    reset_after: float = 3600.0
    jitter: float = 0.1
    attempts: int | None = None
    rng: random.Random | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _require(self.initial_delay > 0, f"initial_delay must be above 0; got {self.initial_delay}")
        _require(
            self.max_delay >= self.initial_delay,
            f"max_delay must be at least initial_delay ({self.initial_delay}); "
            f"got {self.max_delay}",
        )
        _require(self.multiplier > 1, f"multiplier must be above 1; got {self.multiplier}")
        _require(self.reset_after > 0, f"reset_after must be above 0; got {self.reset_after}")
        _require(0 <= self.jitter <= 1, f"jitter must be within [0, 1]; got {self.jitter}")
        _require(
            self.attempts is None or self.attempts >= 1,
            f"attempts must be at least 1, or None for no bound; got {self.attempts}",
        )

    def tracker(self) -> RestartTracker:
        """Return a tracker drawing jitter from ``rng`` (a fresh ``Random`` if none)."""
        return _ExponentialDelayTracker(self, self.rng if self.rng is not None else random.Random())

    def delay_for(self, attempt: int) -> float:
        """Return the delay of the ``attempt``-th restart since a reset (from 0), no jitter."""
        steps = math.ceil(math.log(self.max_delay / self.initial_delay, self.multiplier))
        delay: float = self.initial_delay * self.multiplier ** min(attempt, steps)
        return min(delay, self.max_delay)

    def __repr__(self) -> str:
        return (
            f"RestartStrategy.exponential_delay(initial_delay={self.initial_delay}, "
            f"max_delay={self.max_delay}, multiplier={self.multiplier}, "
            f"reset_after={self.reset_after}, jitter={self.jitter}, attempts={self.attempts})"
        )


class _ExponentialDelayTracker(RestartTracker):
    def __init__(self, strategy: ExponentialDelayRestart, rng: random.Random) -> None:
        super().__init__()
        self._strategy = strategy
        self._rng = rng
        self._attempt = 0
        self._next_restart = -math.inf

    def on_success(self, now: float) -> None:
        """Reset the delay if the job ran ``reset_after`` seconds past its last restart."""
        if now - self._next_restart >= self._strategy.reset_after:
            self._attempt = 0

    def _delay_after_failure(self, now: float) -> float | None:
        if now < self._next_restart:  # fails while a restart is scheduled: same attempt
            return self._next_restart - now
        self.on_success(now)
        attempts = self._strategy.attempts
        if attempts is not None and self._attempt >= attempts:
            return None
        delay = self._jittered(self._strategy.delay_for(self._attempt))
        self._attempt += 1
        self._next_restart = now + delay
        return delay

    def _jittered(self, delay: float) -> float:
        strategy = self._strategy
        offset = delay * strategy.jitter
        jittered = delay + self._rng.uniform(-offset, offset) if offset else delay
        return max(strategy.initial_delay, min(jittered, strategy.max_delay))

    def __repr__(self) -> str:
        return (
            f"<ExponentialDelayTracker attempt={self._attempt} "
            f"next_restart={self._next_restart} failures={self._failures}>"
        )


@dataclass(frozen=True, slots=True, repr=False)
class FailureRateRestart(RestartStrategy):
    """Restarts ``delay`` seconds after a failure unless the failure rate is exceeded.

    The rate is exceeded when a failure is the ``max_failures + 1``-th within ``interval``
    seconds (Flink's rule); older failures age out of the window.
    """

    max_failures: int
    interval: float
    delay: float

    def __post_init__(self) -> None:
        _require(
            self.max_failures >= 1, f"max_failures must be at least 1; got {self.max_failures}"
        )
        _require(self.interval > 0, f"interval must be above 0 seconds; got {self.interval}")
        _require(self.delay >= 0, f"delay must be at least 0 seconds; got {self.delay}")

    def tracker(self) -> RestartTracker:
        """Return a tracker remembering the last ``max_failures + 1`` failure times."""
        return _FailureRateTracker(self)

    def __repr__(self) -> str:
        return (
            f"RestartStrategy.failure_rate(max_failures={self.max_failures}, "
            f"interval={self.interval}, delay={self.delay})"
        )


class _FailureRateTracker(RestartTracker):
    def __init__(self, strategy: FailureRateRestart) -> None:
        super().__init__()
        self._strategy = strategy
        self._times: deque[float] = deque(maxlen=strategy.max_failures + 1)

    def _delay_after_failure(self, now: float) -> float | None:
        self._times.append(now)
        window_full = len(self._times) == self._times.maxlen
        if window_full and now - self._times[0] <= self._strategy.interval:
            return None
        return self._strategy.delay


def _require(condition: bool, message: str) -> None:  # noqa: FBT001 -- a precondition
    if not condition:
        raise ValueError(message)
