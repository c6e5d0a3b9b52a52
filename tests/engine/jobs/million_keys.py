"""A keyed job holding a million keys, for the tests that the loop it runs in never stalls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from lockgate.engine import SinkContext, StreamEnvironment
from lockgate.engine.testing import LoopLag
from tests.engine.jobs.basic import CallbackSink
from tests.engine.jobs.checkpoints import Gate, GatedSource

KEYS = 1_000_000
JOB = "million"
# A stall (a million keys copied, encoded or loaded on the loop) breaks this by far; the loop
# lag goals are checked by bench/ingress.py, never here, on a machine shared by many.
STALL = 0.2


class Processed:
    """Counts the records the job's sink received; ``all`` once every key's count came."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.received = 0
        self.all = anyio.Event()

    def __call__(self, context: SinkContext, records: list[Any]) -> None:
        self.received += len(records)
        if self.received >= self.count:
            self.all.set()

    def __deepcopy__(self, memo: dict[int, Any]) -> Processed:
        return self


def million_keys_job(
    data: Path, gate: Gate, processed: Processed, *, backend: str = "memory"
) -> StreamEnvironment:
    """Each of ``KEYS`` numbers its own key, summed; the source then waits at its gate."""
    env = StreamEnvironment(batch_size=1_000)
    env.enable_checkpointing(None)
    env.set_checkpoint_storage((data / "checkpoints").as_uri())
    env.set_state_backend(backend, path=data / "rocksdb" if backend == "rocksdb" else None)
    (
        env.from_source(GatedSource(KEYS, gate_at=KEYS, gate=gate), uid="numbers")
        .key_by(lambda number: number)
        .reduce(lambda a, b: a + b, uid="sums")
        .sink_to(CallbackSink(processed), uid="out")
    )
    return env


async def checkpointed_million_keys(data: Path) -> None:
    """Build a million keys' state on the memory backend, checkpoint it, and cancel."""
    gate, processed = Gate(), Processed(KEYS)
    async with million_keys_job(data, gate, processed).start(JOB) as job:
        await processed.all.wait()
        await job.trigger_checkpoint()
        job.cancel()


def within_bounds(lag: LoopLag) -> bool:
    """Whether the loop woke at least a few times, and never ``STALL`` late by its own doing.

    Busy lags (``LoopLag.busy_max``): on a machine shared by many, the process may wait
    longer than ``STALL`` for a CPU, which says nothing of the job.
    """
    return lag.samples >= 10 and lag.busy_max < STALL
