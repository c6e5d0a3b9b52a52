"""Watermark alignment in running jobs: a source that runs ahead of its group pauses."""

from __future__ import annotations

import pytest

from lockgate.connectors import CollectionSource
from lockgate.engine import GraphError, StreamEnvironment, WatermarkStrategy
from lockgate.engine.time.clock import ManualClock
from tests.engine.jobs.async_io import wait_until
from tests.engine.jobs.event_time import Partitions, PartitionsSource, WatermarkLog, below

MONOTONOUS = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(float)
ALIGNED = MONOTONOUS.with_watermark_alignment("clicks", max_drift=10.0, update_interval=1.0)


def times(start: int, end: int) -> list[float]:
    return [float(t) for t in range(start, end)]


async def test_a_source_ahead_of_its_group_pauses_until_the_group_catches_up() -> None:
    clock, fast, slow = ManualClock(), Partitions(1), Partitions(1)
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0, clock=clock)
    fast_log, slow_log = WatermarkLog(), WatermarkLog()
    env.from_source(PartitionsSource(fast), uid="fast", watermark_strategy=ALIGNED).sink_to(
        fast_log
    )
    env.from_source(PartitionsSource(slow), uid="slow", watermark_strategy=ALIGNED).sink_to(
        slow_log
    )

    async with env.start("aligned") as job:
        slow.append(0, times(0, 5))
        await slow_log.wait_for_watermark(below(4))
        fast.append(0, times(0, 1000))
        await wait_until(lambda: clock.sleepers == 1)  # the fast source waits, paused
        read_while_paused = len(fast_log.records())
        slow.append(0, times(5, 1000))
        drifts, rounds = [], 0
        read_out = lambda: len(fast_log.records()) + len(slow_log.records()) == 2000  # noqa: E731
        while not read_out():
            await wait_until(lambda: clock.sleepers >= 1 or read_out())  # one of them paused
            drifts.append(abs(max(fast_log.watermarks()) - max(slow_log.watermarks())))
            clock.advance(1.0)  # the paused source looks again
            rounds += 1
        fast.finish(0), slow.finish(0)
        await job.wait()

    assert read_while_paused <= 40  # 4 + 10, and a batch or two read ahead
    assert rounds >= 15  # 1000 s of event time, in steps of a few times the drift
    assert max(drifts) <= 10.0 + 30.0


async def test_a_source_whose_input_ended_holds_its_group_back_no_more() -> None:
    clock, fast = ManualClock(), Partitions(1)
    env = StreamEnvironment(batch_size=10, auto_watermark_interval=0.0, clock=clock)
    fast_log = WatermarkLog()
    env.from_source(PartitionsSource(fast), uid="fast", watermark_strategy=ALIGNED).sink_to(
        fast_log
    )
    ended = CollectionSource(times(0, 3))
    env.from_source(ended, uid="ended", watermark_strategy=ALIGNED).sink_to(WatermarkLog())

    async with env.start("left") as job:
        fast.append(0, times(0, 1000))
        await wait_until(lambda: clock.sleepers == 1 or len(fast_log.records()) == 1000)
        clock.advance(1.0)  # a paused source looks again: the ended one counts no more
        await fast_log.changes.wait_until(lambda: len(fast_log.records()) == 1000)
        fast.finish(0)
        await job.wait()

    assert clock.sleepers == 0


def test_alignment_is_refused_where_no_source_reads() -> None:
    env = StreamEnvironment()
    stream = env.from_source(CollectionSource(times(0, 3)), uid="numbers").map(float)

    stream.assign_timestamps_and_watermarks(ALIGNED, uid="late-stamps").sink_to(WatermarkLog())

    with pytest.raises(GraphError, match=r"'late-stamps' aligns watermarks .* from_source"):
        env.plan()


def test_the_sources_of_a_group_must_allow_the_same_drift() -> None:
    env = StreamEnvironment()
    wider = MONOTONOUS.with_watermark_alignment("clicks", max_drift=20.0)
    for uid, strategy in [("a", ALIGNED), ("b", wider)]:
        source = CollectionSource(times(0, 3))
        env.from_source(source, uid=uid, watermark_strategy=strategy).sink_to(WatermarkLog())

    with pytest.raises(GraphError, match=r"'a-watermarks' and 'b-watermarks' .* same max_drift"):
        env.plan()
