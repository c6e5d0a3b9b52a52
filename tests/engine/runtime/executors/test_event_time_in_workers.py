"""Event time in worker processes: records keep their timestamps across the data plane.

At parallelism 2 on two workers, the keyed edge after the map crosses between processes,
so each record's timestamp, given by the source's watermark strategy and no longer in the
record after the map, must travel with it in the frame, and watermarks must follow.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import anyio

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    JobStatus,
    KeyedProcessFunction,
    ProcessContext,
    ProcessExecutor,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from tests.engine.runtime.executors.jobs import file_checkpointed_env

USERS = ("ann", "bob", "cy", "dee", "eve", "fay")
EVENTS = [(USERS[i % len(USERS)], float(i)) for i in range(120)]  # (user, time): one a second


class Stamp(KeyedProcessFunction[str, str, tuple[str, float | None, int]]):
    """Each user with the timestamp its record carries, and the process that read it."""

    def process_element(
        self, user: str, ctx: ProcessContext[str]
    ) -> Iterator[tuple[str, float | None, int]]:
        yield (user, ctx.timestamp(), os.getpid())


def add(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
    return (a[0], a[1] + b[1])


async def test_timestamps_and_windows_cross_worker_processes(tmp_path: Path) -> None:
    env = file_checkpointed_env(tmp_path)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event: event[1]
    )
    stamped = CollectSink[tuple[str, float | None, int]]()
    counts = CollectSink[tuple[str, int]]()
    users = env.from_source(
        CollectionSource(EVENTS), uid="events", watermark_strategy=strategy
    ).map(lambda event: event[0], uid="users")  # the time is no longer in the record
    users.key_by(lambda user: user).process(Stamp(), uid="stamp").sink_to(stamped, uid="stamped")
    (
        users.map(lambda user: (user, 1), uid="ones")
        .key_by(lambda pair: pair[0])
        .window(TumblingEventTimeWindows.of(30.0))
        .reduce(add, uid="per-30s")
        .sink_to(counts, uid="counts")
    )

    with anyio.fail_after(120):
        result = await env.execute("event-time", executor=ProcessExecutor(workers=2))

    assert result.status is JobStatus.FINISHED
    assert sorted((user, time) for user, time, _ in stamped.results) == sorted(EVENTS)
    readers = {pid for _, _, pid in stamped.results}
    assert len(readers) == 2 and os.getpid() not in readers  # both workers, not this process
    assert sorted(counts.results) == sorted((user, 5) for user in USERS for _ in range(4))
