"""Per-split watermarks in running jobs: each split of a source subtask has its own watermark."""

from __future__ import annotations

import math

from lockgate.engine import StreamEnvironment, WatermarkStrategy
from lockgate.engine.time.clock import ManualClock
from tests.engine.jobs.event_time import Partitions, PartitionsSource, WatermarkLog, below

MONOTONOUS = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(float)


def partitions_job(
    partitions: Partitions, strategy: WatermarkStrategy, clock: ManualClock | None = None
) -> tuple[StreamEnvironment, WatermarkLog]:
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0, clock=clock)
    log = WatermarkLog()
    env.from_source(
        PartitionsSource(partitions), uid="partitions", watermark_strategy=strategy
    ).sink_to(log, uid="log")
    return env, log


async def test_a_source_subtasks_watermark_is_the_minimum_over_its_splits() -> None:
    partitions = Partitions(2)
    env, log = partitions_job(partitions, MONOTONOUS)

    async with env.start("minimum") as job:
        partitions.append(0, [float(t) for t in range(100)])
        partitions.append(1, [float(t) for t in range(10)])
        await log.changes.wait_until(lambda: len(log.records()) == 110)
        await log.wait_for_watermark(below(9))
        job.cancel()

    assert max(log.watermarks()) == below(9)


async def test_a_split_without_records_holds_the_watermark_back() -> None:
    partitions = Partitions(2)
    env, log = partitions_job(partitions, MONOTONOUS)

    async with env.start("held-back") as job:
        partitions.append(0, [float(t) for t in range(100)])
        await log.changes.wait_until(lambda: len(log.records()) == 100)
        for _ in range(3):
            partitions.append(0, [100.0])  # more batches, and periodic emissions after them
            await log.changes.wait_until(lambda: len(log.records()) == 101 + _)  # noqa: B023
        job.cancel()

    assert log.watermarks() == []


async def test_a_finished_split_stops_holding_the_watermark_back() -> None:
    partitions = Partitions(2)
    env, log = partitions_job(partitions, MONOTONOUS)

    async with env.start("finished") as job:
        partitions.append(0, [float(t) for t in range(100)])
        partitions.append(1, [float(t) for t in range(10)])
        await log.changes.wait_until(lambda: len(log.records()) == 110)
        await log.wait_for_watermark(below(9))
        partitions.finish(1)
        await log.wait_for_watermark(below(99))
        partitions.finish(0)
        await job.wait()

    watermarks = log.watermarks()
    assert watermarks[watermarks.index(below(9)) + 1 :] == [below(99), math.inf]


async def test_an_idle_split_stops_holding_back_the_others_until_it_reads_again() -> None:
    clock, partitions = ManualClock(), Partitions(2)
    env, log = partitions_job(partitions, MONOTONOUS.with_idleness(10.0), clock)

    async with env.start("idle-split") as job:
        partitions.append(0, [float(t) for t in range(100)])
        partitions.append(1, [float(t) for t in range(5)])
        await log.changes.wait_until(lambda: len(log.records()) == 105)
        await log.wait_for_watermark(below(4))
        clock.advance(5.0)
        partitions.append(0, [float(t) for t in range(100, 110)])  # p0 reads on, p1 does not
        await log.changes.wait_until(lambda: len(log.records()) == 115)
        held_back = log.watermarks()
        clock.advance(5.0)  # p1 read nothing for its idleness timeout; p0 did
        await log.wait_for_watermark(below(109))
        partitions.append(1, [float(t) for t in range(200, 205)])  # active again, caught up
        partitions.append(0, [float(t) for t in range(300, 310)])
        await log.changes.wait_until(lambda: len(log.records()) == 130)
        await log.wait_for_watermark(below(204))
        job.cancel()

    assert max(held_back) == below(4)
    assert below(109) in log.watermarks()
    assert max(log.watermarks()) == below(204)  # p1 counts again: min(204, 309)
    assert log.late_records() == []
