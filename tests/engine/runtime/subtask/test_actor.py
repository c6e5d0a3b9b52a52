"""SubtaskActor's statistics: where its time went, up to the moment they are read."""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from lockgate.connectors import CollectSink
from lockgate.engine import (
    ManualClock,
    Source,
    SourceContext,
    SourceReader,
    SourceSplit,
    StreamEnvironment,
)


class QuietSource(Source[int]):
    """An unbounded source that never has a record."""

    @property
    def bounded(self) -> bool:
        return False

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit("quiet", 0)]

    def create_reader(self, splits: Sequence[SourceSplit], context: SourceContext) -> _Quiet:
        return _Quiet(list(splits))


class _Quiet(SourceReader[int]):
    def __init__(self, splits: list[SourceSplit]) -> None:
        self.splits = splits

    async def read(self, max_records: int) -> list[int]:
        await anyio.sleep_forever()
        raise AssertionError("never woken")

    def snapshot_splits(self) -> list[SourceSplit]:
        return self.splits


async def test_idle_time_counts_the_wait_for_input_going_on_now() -> None:
    clock = ManualClock()
    env = StreamEnvironment(clock=clock)
    env.from_source(QuietSource(), uid="quiet").sink_to(CollectSink(), uid="out")

    with anyio.fail_after(5):
        async with env.start("quiet") as job:
            await anyio.wait_all_tasks_blocked()
            clock.advance(3.0)
            (subtask,) = job.metrics().of("quiet")

    assert (subtask.idle_time, subtask.busy_time) == (3.0, 0.0)
