"""A source reader hears, at each checkpoint, the positions it stores (and may add to them),
and learns from its context whether the job checkpoints at all."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

from lockgate.connectors import CollectSink
from lockgate.engine import (
    Source,
    SourceContext,
    SourceReader,
    SourceSplit,
    StreamEnvironment,
)


class Log:
    """What the readers of a ``GatedNumbers`` were told, shared by every subtask and attempt."""

    def __init__(self) -> None:
        self.contexts: list[SourceContext] = []
        self.restored: list[Any] = []
        self.checkpoints: list[tuple[int, Any]] = []
        self.completed: list[int] = []
        self.delivered = 0
        self.all_delivered = anyio.Event()
        self.reader_created = anyio.Event()


class GatedNumbers(Source[int]):
    """One split of the numbers below ``count``, read ten at a time; then it waits forever.

    Its reader stores in each checkpoint's position the checkpoint's id, as ``"stamp"``.
    """

    def __init__(self, count: int, log: Log) -> None:
        self.count, self.log = count, log

    @property
    def bounded(self) -> bool:
        return False

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit("numbers", {"next": 0})]

    def create_reader(
        self, splits: Sequence[SourceSplit], context: SourceContext
    ) -> SourceReader[int]:
        self.log.contexts.append(context)
        self.log.restored.extend(split.position for split in splits)
        self.log.reader_created.set()
        return GatedReader(self.count, self.log, splits)


class GatedReader(SourceReader[int]):
    def __init__(self, count: int, log: Log, splits: Sequence[SourceSplit]) -> None:
        self.count, self.log = count, log
        self.next = splits[0].position["next"] if splits else count

    async def read(self, max_records: int) -> list[int]:
        if self.next >= self.count:
            await anyio.sleep_forever()
        start, self.next = self.next, min(self.count, self.next + 10)
        return list(range(start, self.next))

    def snapshot_splits(self) -> list[SourceSplit]:
        return [SourceSplit("numbers", {"next": self.next})]

    def checkpoint_splits(self, checkpoint_id: int, splits: list[SourceSplit]) -> list[SourceSplit]:
        self.log.checkpoints.append((checkpoint_id, [split.position for split in splits]))
        return [SourceSplit(s.split_id, {**s.position, "stamp": checkpoint_id}) for s in splits]

    async def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.log.completed.append(checkpoint_id)


def count_delivered(log: Log, count: int) -> Any:
    def counted(record: int) -> int:
        log.delivered += 1
        if log.delivered >= count:
            log.all_delivered.set()
        return record

    return counted


def gated_job(log: Log, *, count: int = 30, checkpointing: bool = True) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=1, batch_size=10)
    if checkpointing:
        env.enable_checkpointing(None)
    env.from_source(GatedNumbers(count, log), uid="numbers").map(
        count_delivered(log, count), uid="count"
    ).sink_to(CollectSink(), uid="out")
    return env


async def checkpoint_after_delivery(env: StreamEnvironment, log: Log, **start: Any) -> int:
    async with env.start("gated", **start) as job:
        await log.all_delivered.wait()
        completed = await job.trigger_checkpoint()
        job.cancel()
    return completed.checkpoint_id


async def test_a_reader_is_told_the_positions_of_what_each_checkpoint_covers():
    log = Log()

    checkpoint_id = await checkpoint_after_delivery(gated_job(log), log)

    assert log.checkpoints == [(checkpoint_id, [{"next": 30}])]
    assert log.completed == [checkpoint_id]  # told the positions before the completion


async def test_what_the_reader_adds_to_its_positions_is_what_a_restore_hands_back():
    log = Log()
    env = gated_job(log)
    checkpoint_id = await checkpoint_after_delivery(env, log)
    log.reader_created = anyio.Event()

    async with env.start("gated", restore_from="latest") as job:
        await log.reader_created.wait()
        job.cancel()

    assert log.restored == [{"next": 0}, {"next": 30, "stamp": checkpoint_id}]


async def test_a_reader_learns_whether_its_job_checkpoints():
    with_checkpoints, without = Log(), Log()

    for log, checkpointing in ((with_checkpoints, True), (without, False)):
        async with gated_job(log, checkpointing=checkpointing).start("gated") as job:
            await log.all_delivered.wait()
            job.cancel()

    assert [c.checkpointing for c in with_checkpoints.contexts] == [True]
    assert [c.checkpointing for c in without.contexts] == [False]
