"""async_map under failure, as Flink tests exactly-once: records whose calls are in flight at a
checkpoint are in its state, are called again on restore, and every result is committed by a
transactional sink exactly once. Failures fire once, after a completed checkpoint, provably."""

from __future__ import annotations

import random
from itertools import chain
from typing import Any

import anyio.lowlevel
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import MemoryCheckpointStorage, RestartStrategy, StreamEnvironment
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.jobs.async_io import Changes, HeldCalls, in_flight_state, wait_until
from tests.engine.jobs.checkpoints import cancel_and_wait


class CrashingService:
    """Calls through ``calls`` (held until released), and crashes once on record ``at``;
    ``in_flight_at_crash`` is how many calls were still waiting then."""

    def __init__(self, calls: HeldCalls, fail: FailOnce, *, at: int) -> None:
        self.calls = calls
        self.fail = fail
        self.at = at
        self.in_flight_at_crash = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> CrashingService:
        return self

    async def __call__(self, record: int) -> tuple[str, int]:
        await self.calls(record)
        if record == self.at and not self.fail.fired:
            self.in_flight_at_crash = self.calls.active
            self.fail.maybe_fire()
        return ("enriched", record)


async def test_results_commit_exactly_once_after_a_crash_with_hundreds_of_calls_in_flight() -> None:
    fail = FailOnce("the service crashed")
    calls = HeldCalls(Changes())
    service = CrashingService(calls, fail, at=300)
    env = StreamEnvironment(parallelism=1, batch_size=64)
    env.enable_checkpointing(None)  # checkpoints only when the test triggers one
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    sink = CollectSink()
    (
        env.from_source(CollectionSource(range(3_000)), uid="numbers")
        .async_map(service, capacity=1_000, uid="calls")
        .sink_to(sink, uid="out")
    )

    async with env.start("enrich") as job:
        await calls.wait_started(1_000)
        checkpoint = await job.trigger_checkpoint()
        (kept,) = await in_flight_state(env, checkpoint, "calls")
        calls.release(*range(300))  # emitted after the checkpoint, then lost with the attempt
        await wait_until(lambda: job.metrics().of("out")[0].records_out == 300)
        calls.release(300)  # crashes while the calls after it are still held, on any loop
        await wait_until(lambda: fail.fired)
        calls.open()
        result = await job.wait()

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert service.in_flight_at_crash >= 600
    assert result.metrics.attempt == 1
    assert kept == list(range(len(kept))) and len(kept) >= 1_000
    assert sink.results == [("enriched", record) for record in range(3_000)]


async def jittery(record: int) -> int:
    for _ in range(random.randrange(12)):
        await anyio.lowlevel.checkpoint()
    return record * 3


ALIGNMENTS = {
    "aligned": {},
    "unaligned": {"unaligned": True},
    "aligned-timeout-0": {"unaligned": True, "aligned_timeout": 0.0},
}


@pytest.mark.parametrize("alignment", list(ALIGNMENTS))
@pytest.mark.parametrize("ordered", [True, False], ids=["ordered", "unordered"])
async def test_a_failure_after_periodic_checkpoints_loses_and_duplicates_nothing(
    ordered: bool, alignment: str
) -> None:
    random.seed(11)
    fail = FailOnce()
    numbers = [*range(4_000), AwaitCheckpoint(), *range(4_000, 6_000), fail, *range(6_000, 9_000)]
    env = StreamEnvironment(parallelism=2, batch_size=64, channel_capacity=256)
    env.enable_checkpointing(0.005, **ALIGNMENTS[alignment])
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    sink = CollectSink()
    (
        env.from_source(CollectionSource(numbers), uid="numbers", parallelism=1)
        .async_map(jittery, capacity=150, ordered=ordered, uid="calls")
        .sink_to(sink, uid="out")
    )

    result = await env.execute("jittery")

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert result.metrics.attempt == 1
    assert sorted(sink.results) == [record * 3 for record in range(9_000)]


async def test_records_in_flight_are_split_evenly_when_a_job_restores_at_another_parallelism() -> (
    None
):
    storage, sink = MemoryCheckpointStorage(), CollectSink()
    calls = HeldCalls(Changes())

    def build(parallelism: int) -> StreamEnvironment:
        env = StreamEnvironment(parallelism=parallelism, batch_size=16)
        env.set_checkpoint_storage(storage)
        (
            env.from_source(CollectionSource(range(100)), uid="numbers", parallelism=1)
            .async_map(calls, capacity=60, uid="calls")
            .sink_to(sink, uid="out")
        )
        return env

    # Every record fits in the two queues, so the barrier is not stuck behind held input.
    first = build(2)
    async with first.start("rescale") as job:
        await calls.wait_started(100)
        checkpoint = await job.trigger_checkpoint()
        kept = await in_flight_state(first, checkpoint, "calls")
        await cancel_and_wait(job)
    second = build(3)
    spread = await in_flight_state(second, checkpoint, "calls")
    calls.open()

    await second.execute("rescale", restore_from=checkpoint.location)

    assert sorted(chain(*kept)) == list(range(100))
    assert [len(part) for part in spread] == [34, 33, 33]
    assert list(chain(*spread)) == list(chain(*kept))
    assert sorted(sink.results) == list(range(100))
    assert calls.started.count(0) == 2  # called by the first job, and again after the restore
