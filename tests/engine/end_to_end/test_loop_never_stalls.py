"""A job never stalls the event loop it shares with its host: while it checkpoints a million
keys (memory and RocksDB) and while it restores them, the host's 1 ms sleeps wake on time
(LoopLagMonitor), within a bound any stall would break."""

from __future__ import annotations

from pathlib import Path

import anyio

from lockgate.engine.testing import LoopLagMonitor
from tests.engine.jobs.checkpoints import Gate
from tests.engine.jobs.million_keys import (
    JOB,
    KEYS,
    Processed,
    checkpointed_million_keys,
    million_keys_job,
    within_bounds,
)


async def test_a_checkpoint_of_a_million_keys_in_memory_never_stalls_the_loop(
    tmp_path: Path,
) -> None:
    gate, processed = Gate(), Processed(KEYS)

    async with million_keys_job(tmp_path, gate, processed).start(JOB) as job:
        await processed.all.wait()
        async with LoopLagMonitor() as lag:
            await lag.wait_measured(1)
            completed = await job.trigger_checkpoint()
        job.cancel()

    assert completed.metadata.operators["sums"].handles
    assert within_bounds(lag.statistics()), lag.statistics()


async def test_a_restore_of_a_million_keys_into_memory_never_stalls_the_loop(
    tmp_path: Path,
) -> None:
    await checkpointed_million_keys(tmp_path)
    gate, processed = Gate(), Processed(0)

    async with LoopLagMonitor() as lag:
        await lag.wait_measured(1)
        async with million_keys_job(tmp_path, gate, processed).start(
            JOB, restore_from="latest"
        ) as job:
            await gate.reached.wait()  # restored: the source resumes at its end, at the gate
            value = await job.query_state("sums", "reduced", KEYS - 1)
            job.cancel()

    assert value == KEYS - 1
    assert within_bounds(lag.statistics()), lag.statistics()


async def test_a_restore_into_rocksdb_and_a_checkpoint_of_it_never_stall_the_loop(
    tmp_path: Path,
) -> None:
    await checkpointed_million_keys(tmp_path)
    gate, processed = Gate(), Processed(0)

    async with LoopLagMonitor() as lag:
        await lag.wait_measured(1)
        async with million_keys_job(tmp_path, gate, processed, backend="rocksdb").start(
            JOB, restore_from="latest"
        ) as job:
            await gate.reached.wait()
            restored = lag.statistics()
            lag.reset()
            await lag.wait_measured(1)
            with anyio.fail_after(120):
                await job.trigger_checkpoint()
            value = await job.query_state("sums", "reduced", KEYS - 1)
            job.cancel()

    assert value == KEYS - 1
    assert within_bounds(restored), restored
    assert within_bounds(lag.statistics()), lag.statistics()
