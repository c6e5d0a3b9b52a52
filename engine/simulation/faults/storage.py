"""ModelledStorage: the simulation's checkpoint storage, slow or failing as its faults say."""

from __future__ import annotations

import random
from collections.abc import Sequence

from lockgate.engine.checkpointing.messages import StateHandle
from lockgate.engine.checkpointing.metadata import CheckpointMetadata
from lockgate.engine.checkpointing.storage.memory import MemoryCheckpointStorage
from lockgate.engine.errors import CheckpointStorageError
from lockgate.engine.simulation.clock import VirtualClock
from lockgate.engine.simulation.models.distributions import Distribution

__all__ = ["ModelledStorage"]


class ModelledStorage(MemoryCheckpointStorage):
    """Checkpoints in memory, each write taking a modelled time, some refused on purpose.

    A memory storage (so the job trusts its own checkpoints, as it trusts any memory
    storage's), whose writes wait a draw of ``write`` on the virtual clock first and whose
    reads wait a draw of ``read``. ``fail_at`` lists virtual times: the first metadata
    write at or after each is refused with ``CheckpointStorageError``, which fails that
    checkpoint; ``refused`` lists ``(time, checkpoint_id)`` of each refusal.
    """

    def __init__(
        self,
        clock: VirtualClock,
        rng: random.Random,
        *,
        write: Distribution | None = None,
        read: Distribution | None = None,
        fail_at: Sequence[float] = (),
    ) -> None:
        super().__init__()
        self.clock = clock
        self.rng = rng
        self.write = write
        self.read = read
        self.refused: list[tuple[float, int]] = []
        self._fail_at = sorted(fail_at)

    async def write_state(
        self, job: str, checkpoint_id: int, name: str, data: bytes
    ) -> StateHandle:
        """Wait the modelled write time, then store the file."""
        await self._take(self.write)
        return await super().write_state(job, checkpoint_id, name, data)

    async def write_shared(self, job: str, name: str, data: bytes) -> StateHandle:
        """Wait the modelled write time, then store the shared file."""
        await self._take(self.write)
        return await super().write_shared(job, name, data)

    async def read_state(self, handle: StateHandle) -> bytes:
        """Wait the modelled read time, then read the file."""
        await self._take(self.read)
        return await super().read_state(handle)

    async def write_metadata(self, metadata: CheckpointMetadata) -> str:
        """Wait the modelled write time, then write the metadata, unless it is to fail.

        Raises:
            CheckpointStorageError: a ``FailCheckpoint`` is due.
        """
        await self._take(self.write)
        now = self.clock.now()
        if self._fail_at and self._fail_at[0] <= now:
            self._fail_at.pop(0)
            self.refused.append((now, metadata.checkpoint_id))
            raise CheckpointStorageError(
                f"the modelled checkpoint storage refused checkpoint {metadata.checkpoint_id} "
                f"of job '{metadata.job_name}' at virtual time {now:.3f} s (a FailCheckpoint "
                "fault of the simulation)"
            )
        return await super().write_metadata(metadata)

    async def _take(self, time: Distribution | None) -> None:
        if time is not None:
            seconds = time.draw(self.rng)
            if seconds > 0:
                await self.clock.sleep(seconds)

    def __repr__(self) -> str:
        return f"<ModelledStorage write={self.write!r} refused={len(self.refused)}>"
