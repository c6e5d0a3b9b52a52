"""A keyed count job run again and again on one checkpoint storage, a generation of records at
a time: for the tests of what runs leave in storage and what "latest" restores."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import anyio

from lockgate.connectors import CollectSink
from lockgate.engine import CompletedCheckpoint, JobClient, StreamEnvironment
from lockgate.engine.restore.resolve import RestoreFrom
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.savepoints import Topic, TopicSource

KEYS = 4
JOB = "counts"

Record = tuple[int, int]  # (generation, key)


class Arrivals:
    """Which records passed the source subtask; shared by every copy of the job.

    A restored run reads some records again, so the topic's own count of records passed
    would run ahead of the records appended: this waits for the very records instead.
    """

    def __init__(self) -> None:
        self.seen: set[Record] = set()
        self._changed = anyio.Event()

    def passed(self, record: Record) -> Record:
        self.seen.add(record)
        self._changed.set()
        return record

    async def wait_for(self, records: Collection[Record]) -> None:
        while not self.seen.issuperset(records):
            self._changed = anyio.Event()
            await self._changed.wait()

    def __deepcopy__(self, memo: dict[int, Any]) -> Arrivals:
        return self


class Generations:
    """A topic that grows by one record per key and generation, and the job counting them.

    Every run writes to one sink, the external system: a restore commits again what the
    checkpoint it restores recorded as pending, which that sink ignores if it has it.
    ``backend`` is ``memory`` or ``rocksdb``, ``-incremental`` added for incremental
    checkpoints.
    """

    def __init__(self, storage: str, *, max_retained: int = 4, backend: str = "memory") -> None:
        self.storage = storage
        self.max_retained = max_retained
        self.backend = backend
        self.topic = Topic(2)
        self.arrivals = Arrivals()
        self.sink = CollectSink[Any]()
        self.appended = 0

    async def run(
        self, generations: int, *, restore_from: RestoreFrom = None
    ) -> tuple[list[str], list[Any]]:
        """Run the job once: per generation, append one record per key, take a checkpoint.

        Return the locations of the checkpoints taken and what the run committed.
        """
        before, locations = len(self.sink.results), []
        async with self.job().start(JOB, restore_from=restore_from) as job:
            for _ in range(generations):
                locations.append((await self._generation(job)).location)
            await cancel_and_wait(job)
        return locations, self.sink.results[before:]

    def job(self) -> StreamEnvironment:
        env = StreamEnvironment(parallelism=2, max_parallelism=32)
        env.enable_checkpointing(max_retained=self.max_retained)
        env.set_checkpoint_storage(self.storage)
        name, _, incremental = self.backend.partition("-")
        env.set_state_backend(name, incremental=bool(incremental))
        (
            env.from_source(TopicSource(self.topic), uid="events")
            .map(self.arrivals.passed)
            .map(lambda record: (record[1], 1))
            .key_by(lambda pair: pair[0])
            .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
            .sink_to(self.sink, uid="out")
        )
        return env

    async def _generation(self, job: JobClient) -> CompletedCheckpoint:
        self.appended += 1
        records = [(self.appended, key) for key in range(KEYS)]
        self.topic.append(records, partition_of=lambda record: record[1])
        await self.arrivals.wait_for(records)
        return await job.trigger_checkpoint()
