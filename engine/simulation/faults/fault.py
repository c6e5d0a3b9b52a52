"""The faults a simulation injects: a killed attempt, a failed checkpoint, a slow storage."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeAlias

from lockgate.engine.simulation.models.distributions import Distribution

__all__ = ["FailCheckpoint", "Fault", "InjectedFault", "KillAttempt", "SlowStorage"]


@dataclass(frozen=True, slots=True)
class KillAttempt:
    """At virtual time ``at`` the running attempt is killed, as a crashed process would be.

    Its subtasks stop at once (``AttemptKilled``); the restart strategy decides what
    follows, and the next attempt restores the latest completed checkpoint: sources rewind,
    state is restored, two-phase-commit sinks recover their transactions. A kill while no
    attempt runs (the job waits to restart) does nothing, and the report says so.
    """

    at: float

    def __post_init__(self) -> None:
        _check_time("KillAttempt", self.at)


@dataclass(frozen=True, slots=True)
class FailCheckpoint:
    """The first checkpoint whose metadata is written at or after ``at`` fails.

    The checkpoint storage refuses the write (the coordinator aborts the checkpoint with
    ``STORAGE_FAILED``); it counts toward ``tolerable_failures`` as any failed checkpoint.
    """

    at: float

    def __post_init__(self) -> None:
        _check_time("FailCheckpoint", self.at)


@dataclass(frozen=True, slots=True)
class SlowStorage:
    """Each write to the checkpoint storage takes a draw of ``write`` seconds of virtual time.

    State files, shared files and metadata alike, each on its own (the storage serves
    writes in parallel); with ``read``, each read takes a draw of it too (a restore).
    Without it, storage costs no virtual time: its work runs between two instants.
    """

    write: Distribution
    read: Distribution | None = None


@dataclass(frozen=True, slots=True)
class InjectedFault:
    """A fault as it went: its kind, when it was due, when it struck, if it did.

    ``ends_at`` is when a fault with a length of its own (an outage) ended.
    """

    kind: str
    at: float
    struck_at: float | None
    detail: str
    ends_at: float | None = None


Fault: TypeAlias = KillAttempt | FailCheckpoint | SlowStorage
"""One of the faults ``Simulation(faults=...)`` takes."""


def _check_time(fault: str, at: float) -> None:
    if not (at >= 0 and math.isfinite(at)):
        raise ValueError(f"{fault}: at must be a finite virtual time, 0 or more; got {at}")
