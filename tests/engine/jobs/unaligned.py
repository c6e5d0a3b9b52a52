"""The ordered-sequence job of Flink's UnalignedCheckpointITCase, and its failing functions.

Each source subtask emits its own sequence ``(source, 0), (source, 1), ...``; records are
keyed by a shifted source id, then by the source id, so they change subtasks several times
while each source's records stay on one path (in order); a slow transactional sink keeps
the channels full. Five failures fire once each, placed by sequence numbers (not by time):
in a map at 1/4 of the sequence, in a snapshot once 1/2 has passed, in a map at 3/4 and in
the restore that follows, and in ``close`` once a subtask has seen the end.
"""

from __future__ import annotations

import math
from typing import Any

import anyio
import anyio.lowlevel

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    CompletedCheckpoint,
    FunctionInitializationContext,
    FunctionSnapshotContext,
    JobClient,
    KeyedProcessFunction,
    ProcessContext,
    RestartStrategy,
    StreamEnvironment,
    WatermarkStrategy,
)
from lockgate.engine.io.driver_side import DriverSide
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.savepoints import Topic

SOURCES = 3
SEQUENCE = 6_000  # records per source
YIELDS_PER_BATCH = 40  # how much slower the sink is than the rest of the job

Record = tuple[int, int]  # (source, sequence number)


class Failures(DriverSide):
    """The five injected failures, shared by every copy of the functions and every attempt.

    In worker processes each process's copy collects late records and the highest
    watermark, and tells the original in the driving process when a subtask closes.
    """

    def __init__(self) -> None:
        self.map_at_quarter = FailOnce("a map failed at 1/4 of the sequence")
        self.snapshot_after_half = FailOnce("a snapshot failed after 1/2 of the sequence")
        self.map_at_three_quarters = FailOnce("a map failed at 3/4 of the sequence")
        self.restore_after_three_quarters = FailOnce("the restore after 3/4 failed")
        self.close_at_the_end = FailOnce("close failed at the end")
        self.late: list[Record] = []  # records at or below their subtask's watermark
        self.highest_watermark = -math.inf

    def observed(self, late: list[Record], highest_watermark: float) -> None:
        """What a worker's copy saw (on the original in the driving process)."""
        self.late.extend(late)
        self.highest_watermark = max(self.highest_watermark, highest_watermark)

    @property
    def all(self) -> list[FailOnce]:
        return [
            self.map_at_quarter,
            self.snapshot_after_half,
            self.map_at_three_quarters,
            self.restore_after_three_quarters,
            self.close_at_the_end,
        ]


class FailAtQuarter:
    """A map that fails once on the first record at 1/4 of a sequence."""

    def __init__(self, failures: Failures) -> None:
        self.failures = failures

    def __call__(self, record: Record) -> Record:
        if record[1] >= SEQUENCE // 4:
            self.failures.map_at_quarter.maybe_fire()
        return record


class FailInSnapshotAfterHalf:
    """A checkpointed map whose snapshot fails once after it saw 1/2 of a sequence."""

    def __init__(self, failures: Failures) -> None:
        self.failures = failures
        self.past_half = False

    def initialize_state(self, context: FunctionInitializationContext) -> None:
        self.past_half = False

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        if self.past_half:
            self.failures.snapshot_after_half.maybe_fire()

    def __call__(self, record: Record) -> Record:
        self.past_half = self.past_half or record[1] >= SEQUENCE // 2
        return record


class FailAtThreeQuartersAndOnRestore:
    """A checkpointed map that fails once at 3/4 of a sequence, and once in the restore after."""

    def __init__(self, failures: Failures) -> None:
        self.failures = failures

    def initialize_state(self, context: FunctionInitializationContext) -> None:
        if context.is_restored and self.failures.map_at_three_quarters.fired:
            self.failures.restore_after_three_quarters.maybe_fire()

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        """Nothing to bring into state."""

    def __call__(self, record: Record) -> Record:
        if record[1] >= 3 * SEQUENCE // 4:
            self.failures.map_at_three_quarters.maybe_fire()
        return record


class FailInCloseAtTheEnd(KeyedProcessFunction[int, Record, Record]):
    """Passes records on; its close fails once in a subtask that saw a sequence's end."""

    def __init__(self, failures: Failures) -> None:
        self.failures = failures
        self.saw_the_end = False

    def process_element(self, value: Record, ctx: ProcessContext[int]) -> Any:
        self.saw_the_end = self.saw_the_end or value[1] == SEQUENCE - 1
        watermark = ctx.current_watermark()
        if value[1] <= watermark:
            self.failures.late.append(value)
        self.failures.highest_watermark = max(self.failures.highest_watermark, watermark)
        return [value]

    def close(self) -> None:
        failures = self.failures
        failures.tell_driver("observed", list(failures.late), failures.highest_watermark)
        if self.saw_the_end:
            self.failures.close_at_the_end.maybe_fire()


class SlowCollectSink(CollectSink[Record]):
    """A ``CollectSink`` that yields the event loop many times per batch: the job's bottleneck.

    Everything upstream runs meanwhile, so the channels into the sink fill up and stay full
    (backpressure), without any sleep.
    """

    async def write(self, txn: Any, records: list[Record]) -> None:
        for _ in range(YIELDS_PER_BATCH):
            await anyio.lowlevel.checkpoint()
        await super().write(txn, records)


def sequences() -> list[Any]:
    """Source i's sequence fills split i; it waits for a checkpoint a little before each
    failure (at 1/5, 2/5 and 7/10), so every failure comes after a completed checkpoint."""
    elements: list[Any] = []
    for source in range(SOURCES):
        records: list[Any] = [(source, n) for n in range(SEQUENCE)]
        for position in (7 * SEQUENCE // 10, 2 * SEQUENCE // 5, SEQUENCE // 5):
            records.insert(position, AwaitCheckpoint())
        elements += records
    return elements


EVENT_TIME = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
    lambda record: record[1]
)
"""A record's event time is its sequence number: monotonous per source."""


def ordered_sequence_job(
    sink: CollectSink[Record], failures: Failures, *, event_time: bool = False, **alignment: Any
) -> StreamEnvironment:
    """The job; with ``event_time`` its sources emit a watermark after every batch."""
    env = StreamEnvironment(
        parallelism=SOURCES, batch_size=16, channel_capacity=64, auto_watermark_interval=0.0
    )
    env.enable_checkpointing(0.02, **alignment)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=8, delay=0.0))
    strategy = EVENT_TIME if event_time else None
    (
        env.from_source(CollectionSource(sequences()), uid="sequences", watermark_strategy=strategy)
        .map(FailAtQuarter(failures), uid="fail-at-quarter")
        .key_by(lambda record: (record[0] + 1) % SOURCES)
        .map(FailInSnapshotAfterHalf(failures), uid="fail-in-snapshot")
        .key_by(lambda record: record[0])
        .map(FailAtThreeQuartersAndOnRestore(failures), uid="fail-at-three-quarters")
        .key_by(lambda record: record[0])
        .process(FailInCloseAtTheEnd(failures), uid="fail-in-close")
        .sink_to(sink, uid="out")
    )
    return env


class GatedCollectSink(CollectSink[Any]):
    """A ``CollectSink`` whose writes wait until ``release`` is set: the job backs up."""

    def __init__(self) -> None:
        super().__init__()
        self.writing = anyio.Event()
        self.release = anyio.Event()

    async def write(self, txn: Any, records: list[Any]) -> None:
        self.writing.set()
        await self.release.wait()
        await super().write(txn, records)


def filled_topic(records: int = 3_000) -> Topic:
    """A topic of two partitions holding ``0 .. records - 1``, even numbers in the first."""
    topic = Topic(partitions=2)
    topic.append(range(records), partition_of=lambda n: n)
    return topic


async def trigger(job: JobClient, completed: list[CompletedCheckpoint]) -> None:
    """Trigger a checkpoint of ``job``; append it to ``completed`` once it completes."""
    completed.append(await job.trigger_checkpoint())


async def checkpoint_when_full(
    env: StreamEnvironment, sink: GatedCollectSink, name: str
) -> CompletedCheckpoint:
    """Start ``env``'s job, let its channels fill up behind ``sink``, checkpoint it, cancel it.

    The sink's writes wait until the barriers have gone as far as they can; then it runs.
    """
    completed: list[CompletedCheckpoint] = []
    with anyio.fail_after(10):
        async with env.start(name) as job:
            await sink.writing.wait()
            await anyio.wait_all_tasks_blocked()  # every channel is full
            async with anyio.create_task_group() as group:
                group.start_soon(trigger, job, completed)
                await anyio.wait_all_tasks_blocked()  # the barriers overtook the records
                sink.release.set()
            await cancel_and_wait(job)
    return completed[0]
