"""FaultInjector: puts a simulation's faults into its run, and remembers what they did."""

from __future__ import annotations

from collections.abc import Sequence

from lockgate.engine.api.client import JobClient
from lockgate.engine.checkpointing.storage import CheckpointStorage, MemoryCheckpointStorage
from lockgate.engine.errors import AttemptKilled
from lockgate.engine.simulation.clock import VirtualClock
from lockgate.engine.simulation.faults.fault import (
    FailCheckpoint,
    Fault,
    InjectedFault,
    KillAttempt,
    SlowStorage,
)
from lockgate.engine.simulation.faults.storage import ModelledStorage
from lockgate.engine.simulation.models.model import ModelContext

__all__ = ["FaultInjector"]


class FaultInjector:
    """The faults of one simulation run: the storage they need, the kills they schedule.

    ``storage`` swaps the job's checkpoint storage for a ``ModelledStorage`` when a
    ``SlowStorage`` or ``FailCheckpoint`` is among the faults (a simulation keeps its
    checkpoints in memory, then); ``run`` kills the attempt at each ``KillAttempt``'s time;
    ``injected`` says what each fault did.
    """

    def __init__(self, faults: Sequence[Fault]) -> None:
        slow = [fault for fault in faults if isinstance(fault, SlowStorage)]
        if len(slow) > 1:
            raise ValueError(f"a simulation takes one SlowStorage at most; got {len(slow)}")
        for fault in faults:
            if not isinstance(fault, KillAttempt | FailCheckpoint | SlowStorage):
                raise TypeError(
                    f"a fault is a KillAttempt, FailCheckpoint or SlowStorage; got {fault!r}"
                )
        self.slow = slow[0] if slow else None
        self.kills = sorted((f for f in faults if isinstance(f, KillAttempt)), key=_at)
        self.failures = sorted((f for f in faults if isinstance(f, FailCheckpoint)), key=_at)
        self.modelled: ModelledStorage | None = None
        self._struck: list[float | None] = []

    def storage(
        self, storage: CheckpointStorage, clock: VirtualClock, seed: int
    ) -> CheckpointStorage:
        """The storage the run uses: ``storage``, or a modelled one if the faults need it."""
        self.modelled = None
        self._struck = []
        if self.slow is None and not self.failures:
            return storage
        if not isinstance(storage, MemoryCheckpointStorage):
            raise ValueError(
                "SlowStorage and FailCheckpoint model the checkpoint storage in memory; the "
                f"job keeps its checkpoints in {storage!r}: leave its storage unset "
                "(memory://) for the simulation"
            )
        slow = self.slow
        self.modelled = ModelledStorage(
            clock,
            ModelContext("checkpoint-storage", seed).random("writes"),
            write=None if slow is None else slow.write,
            read=None if slow is None else slow.read,
            fail_at=[failure.at for failure in self.failures],
        )
        return self.modelled

    async def run(self, job: JobClient, clock: VirtualClock) -> None:
        """Kill the running attempt at each ``KillAttempt``'s time."""
        for kill in self.kills:
            await clock.sleep(max(0.0, kill.at - clock.now()))
            now = clock.now()
            killed = job.fail_attempt(
                AttemptKilled(f"the simulation killed the attempt at virtual time {now:.3f} s")
            )
            self._struck.append(now if killed else None)

    def injected(self) -> list[InjectedFault]:
        """What every fault did, in order of time."""
        struck = self._struck + [None] * (len(self.kills) - len(self._struck))
        kills = [
            InjectedFault("kill attempt", kill.at, when, _kill_detail(when))
            for kill, when in zip(self.kills, struck, strict=True)
        ]
        refused: list[tuple[float, int] | None] = []
        if self.modelled is not None:
            refused += self.modelled.refused
        refused += [None] * (len(self.failures) - len(refused))
        failures = [
            InjectedFault(
                "failed checkpoint",
                failure.at,
                None if refusal is None else refusal[0],
                "no checkpoint came after it" if refusal is None else f"checkpoint {refusal[1]}",
            )
            for failure, refusal in zip(self.failures, refused, strict=True)
        ]
        return sorted([*kills, *failures], key=lambda fault: fault.at)


def _at(fault: KillAttempt | FailCheckpoint) -> float:
    return fault.at


def _kill_detail(struck: float | None) -> str:
    return "the attempt was killed" if struck is not None else "no attempt was running"
