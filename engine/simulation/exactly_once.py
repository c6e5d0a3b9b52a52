"""ExactlyOnceSearch: many seeds of a job, killed at random virtual times, checked exact.

The simulation's answer to "is it really exactly-once?": each seed runs the job on virtual
time with attempts killed at times drawn from the seed, the restart strategy restoring
each from the latest checkpoint, and the records the sink committed are compared with
what the job must commit: every expected record once, nothing else.
"""

from __future__ import annotations

import collections
import random
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

from lockgate.engine.api.environment import StreamEnvironment
from lockgate.engine.simulation.faults.fault import KillAttempt
from lockgate.engine.simulation.simulation import Backend, Simulation

__all__ = ["CrashScenario", "ExactlyOnceSearch", "SearchResult", "SeedOutcome"]


@dataclass(frozen=True, slots=True)
class CrashScenario:
    """One seed's job: its environment, how to read what it committed, what it must commit.

    Build a new one for every seed (``env`` with fresh models and a fresh sink), so that
    no seed sees another's records. ``committed()`` is read after the run ends;
    ``expected`` is compared with it as a multiset (order aside), so every record must be
    hashable.
    """

    env: StreamEnvironment
    committed: Callable[[], Sequence[Hashable]]
    expected: Sequence[Hashable]


@dataclass(frozen=True, slots=True)
class SeedOutcome:
    """What one seed found: when its kills came, which struck, and what was wrong.

    ``restored`` holds, per kill that struck, the checkpoint the next attempt restored
    (``None``: no checkpoint had completed, it started without state). ``missing`` and
    ``duplicated`` count records committed fewer or more times than expected, ``unexpected``
    records not expected at all; ``error`` is the job's own failure, if it failed.
    """

    seed: int
    kills: tuple[float, ...]
    struck: int
    restored: tuple[int | None, ...]
    committed: int
    missing: int
    duplicated: int
    unexpected: int
    error: str | None
    example: str

    @property
    def exact(self) -> bool:
        """Whether the sink committed exactly what was expected, and the job did not fail."""
        return self.error is None and not (self.missing or self.duplicated or self.unexpected)

    def describe(self) -> str:
        """One line: the seed, its kills, and what it committed wrong."""
        kills = ", ".join(f"{t:.3f} s" for t in self.kills)
        if self.error is not None:
            return f"seed {self.seed} (kills at {kills}): the job failed: {self.error}"
        return (
            f"seed {self.seed} (kills at {kills}; restored {list(self.restored)}): "
            f"{self.missing} missing, {self.duplicated} duplicated, {self.unexpected} "
            f"unexpected of {self.committed} committed{self.example}"
        )


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Every seed's outcome; ``exact`` when every seed committed exactly what it must."""

    outcomes: tuple[SeedOutcome, ...]

    @property
    def exact(self) -> bool:
        """Whether every seed was exact."""
        return all(outcome.exact for outcome in self.outcomes)

    @property
    def failures(self) -> tuple[SeedOutcome, ...]:
        """The seeds that were not exact."""
        return tuple(outcome for outcome in self.outcomes if not outcome.exact)

    @property
    def kills_struck(self) -> int:
        """Kills that struck a running attempt, over all seeds."""
        return sum(outcome.struck for outcome in self.outcomes)

    @property
    def restores_from_checkpoints(self) -> int:
        """Kills after which the next attempt restored a completed checkpoint."""
        return sum(c is not None for outcome in self.outcomes for c in outcome.restored)

    def describe(self) -> str:
        """A summary line, then one line per seed that was not exact (the first ten)."""
        failures = self.failures
        head = (
            f"{len(self.outcomes)} seeds, {self.kills_struck} kills struck, "
            f"{self.restores_from_checkpoints} restored from a checkpoint: "
            f"{len(failures)} not exactly-once"
        )
        return "\n".join([head, *(outcome.describe() for outcome in failures[:10])])


class ExactlyOnceSearch:
    """Runs ``build(seed)``'s job for each seed with ``kills`` crashes at random times.

    The kill times are drawn uniformly from ``window`` (virtual seconds), from the seed
    alone, so a failing seed repeats: run it again to study it. Each seed runs a
    ``Simulation`` for at most ``until`` virtual seconds; the job should end by itself
    before (a bounded source), having committed everything. Give the job checkpointing
    and a restart strategy that outlasts the kills.
    """

    def __init__(
        self,
        build: Callable[[int], CrashScenario],
        *,
        until: float,
        window: tuple[float, float],
        kills: int = 1,
        backend: Backend = "asyncio",
    ) -> None:
        start, end = window
        if not 0 <= start < end <= until:
            raise ValueError(
                f"window must be (start, end) with 0 <= start < end <= until ({until}); "
                f"got {window}"
            )
        if kills < 0:
            raise ValueError(f"kills must be 0 or more; got {kills}")
        self.build = build
        self.until = until
        self.window = window
        self.kills = kills
        self.backend = backend

    def kill_times(self, seed: int) -> tuple[float, ...]:
        """The virtual times seed ``seed`` kills its attempts at."""
        rng = random.Random(f"exactly-once/{seed}")
        return tuple(sorted(rng.uniform(*self.window) for _ in range(self.kills)))

    def run(self, seeds: Iterable[int]) -> SearchResult:
        """Run every seed; return what each found."""
        return SearchResult(tuple(self.run_seed(seed) for seed in seeds))

    def run_seed(self, seed: int) -> SeedOutcome:
        """Run one seed and compare what it committed with what it must."""
        scenario = self.build(seed)
        times = self.kill_times(seed)
        faults = [KillAttempt(time) for time in times]
        simulation = Simulation(
            scenario.env, seed=seed, until=self.until, backend=self.backend, faults=faults
        )
        try:
            report = simulation.run(f"exactly-once-{seed}")
        except Exception as error:  # the job's failure is this seed's finding
            return _outcome(seed, times, (), [], scenario.expected, error=repr(error))
        killed = [fault for fault in report.faults if fault.kind == "kill attempt"]
        restored = tuple(f.restored_checkpoint for f in killed if f.struck_at is not None)
        return _outcome(seed, times, restored, scenario.committed(), scenario.expected)


def _outcome(
    seed: int,
    kills: tuple[float, ...],
    restored: tuple[int | None, ...],
    committed: Sequence[Hashable],
    expected: Sequence[Hashable],
    *,
    error: str | None = None,
) -> SeedOutcome:
    have, want = collections.Counter(committed), collections.Counter(expected)
    missing = want - have
    extra = have - want
    duplicated = collections.Counter({r: n for r, n in extra.items() if r in want})
    unexpected = collections.Counter({r: n for r, n in extra.items() if r not in want})
    return SeedOutcome(
        seed,
        kills,
        len(restored),
        restored,
        len(committed),
        missing.total(),
        duplicated.total(),
        unexpected.total(),
        error,
        _example(missing, duplicated, unexpected),
    )


def _example(*found: collections.Counter[Hashable]) -> str:
    names = ("missing", "duplicated", "unexpected")
    for name, counter in zip(names, found, strict=True):
        if counter:
            record, _ = min(counter.items(), key=lambda item: repr(item[0]))
            return f" (first {name}: {record!r})"
    return ""
