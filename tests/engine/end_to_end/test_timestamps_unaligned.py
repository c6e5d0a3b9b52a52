"""Timestamps through the channel state of an unaligned checkpoint, a failure and a restore.

The job drops each event's time right after its source, so the windows can only place a
record by the timestamp it carries. A gated sink stops the windows until every channel into
them is full; an unaligned checkpoint then stores the records its barriers overtook, with
their timestamps, and the records in ``async_map``'s queue too. Once it completed, a failure
is injected; the job restores from it and must emit exactly what a plain loop computes.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import anyio.lowlevel

from lockgate.connectors import CollectionSource
from lockgate.engine import (
    CompletedCheckpoint,
    MemoryCheckpointStorage,
    RestartStrategy,
    StreamEnvironment,
)
from lockgate.engine.testing import FailOnce
from tests.engine.end_to_end.test_timestamps import Keyed, drop_time, tumbling_sums, window_sums
from tests.engine.jobs.savepoints import Topic, TopicSource
from tests.engine.jobs.timestamps import BY_TIME, events
from tests.engine.jobs.unaligned import GatedCollectSink, trigger

FIRST, LAST, OTHER = events(2_000), events(40, seed=5, start=500.0), events(300, seed=3)


class FailWhenArmed:
    """The identity; once ``armed``, it fails the first record it sees (once)."""

    def __init__(self) -> None:
        self.armed = False
        self.failure = FailOnce("a map failed after the unaligned checkpoint")

    def __deepcopy__(self, memo: dict[int, Any]) -> FailWhenArmed:
        return self

    def __call__(self, pair: Keyed) -> Keyed:
        if self.armed:
            self.failure.maybe_fire()
        return pair


async def unchanged(pair: Keyed) -> Keyed:
    """The identity, after letting the loop run: calls complete out of order."""
    for _ in range(pair[1] % 3):
        await anyio.lowlevel.checkpoint()
    return pair


def job(topic: Topic, sink: GatedCollectSink, fail: FailWhenArmed) -> StreamEnvironment:
    env = StreamEnvironment(
        parallelism=2, batch_size=16, channel_capacity=64, auto_watermark_interval=0.0
    )
    env.enable_checkpointing(None, unaligned=True)  # checkpoints only when triggered
    env.set_checkpoint_storage(MemoryCheckpointStorage())
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=1, delay=0.0))
    mapped = (
        env.from_source(TopicSource(topic), uid="events", watermark_strategy=BY_TIME)
        .map(drop_time, uid="drop-time")
        .map(fail, uid="fail")
        .flat_map(lambda pair: [pair, (pair[0], pair[1] * 1000)], uid="twice")
        .async_map(unchanged, ordered=False, uid="unchanged")
    )
    other = env.from_source(CollectionSource(OTHER), uid="other", watermark_strategy=BY_TIME).map(
        drop_time, uid="drop-time-2"
    )
    window_sums(mapped.union(other), 5.0).sink_to(sink, uid="out")
    return env


async def test_timestamps_survive_an_unaligned_checkpoint_a_failure_and_the_restore() -> None:
    topic, sink, fail = Topic(partitions=2), GatedCollectSink(), FailWhenArmed()
    topic.append(FIRST, partition_of=lambda event: event[2])
    completed: list[CompletedCheckpoint] = []
    with anyio.fail_after(30):
        async with job(topic, sink, fail).start("stamped-unaligned") as client:
            await sink.writing.wait()
            await anyio.wait_all_tasks_blocked()  # every channel into the windows is full
            async with anyio.create_task_group() as group:
                group.start_soon(trigger, client, completed)
                await anyio.wait_all_tasks_blocked()  # the barriers overtook the records
                sink.release.set()
            fail.armed = True
            topic.append(LAST, partition_of=lambda event: event[2])
            topic.close()
            await client.wait()
            failures = client.failures

    [checkpoint] = completed
    assert checkpoint.statistics is not None and checkpoint.statistics.persisted_in_flight > 0
    assert fail.failure.fired
    assert len(failures) == 1
    timed = [(t, (k, v)) for k, t, v in FIRST + LAST]
    timed += [(t, (k, v * 1000)) for k, t, v in FIRST + LAST]
    timed += [(t, (k, v)) for k, t, v in OTHER]
    assert Counter(sink.results) == tumbling_sums(timed, 5.0)
