"""A run numbers its checkpoints past every id its storage holds, so "latest" is the newest.

A run restored from an older checkpoint goes on from there; the checkpoints of the run it
abandoned stay in storage with lower ids, so ``restore_from="latest"`` never returns to them.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import anyio

from lockgate.connectors import CollectSink
from lockgate.engine import (
    CompletedCheckpoint,
    FileSystemCheckpointStorage,
    JobClient,
    StreamEnvironment,
)
from lockgate.engine.restore.resolve import RestoreFrom
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.savepoints import Topic, TopicSource

KEYS = 4

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


def counts_job(
    topic: Topic, arrivals: Arrivals, sink: CollectSink[Any], storage: str
) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, max_parallelism=32)
    env.enable_checkpointing(max_retained=4)
    env.set_checkpoint_storage(storage)
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(arrivals.passed)
        .map(lambda record: (record[1], 1))
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="out")
    )
    return env


class Generations:
    """A topic that grows by one record per key and generation, and the job counting them.

    Every run writes to one sink, the external system: a restore commits again what the
    checkpoint it restores recorded as pending, which that sink ignores if it has it.
    """

    def __init__(self, storage: str) -> None:
        self.storage = storage
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
        env = counts_job(self.topic, self.arrivals, self.sink, self.storage)
        before, locations = len(self.sink.results), []
        async with env.start("counts", restore_from=restore_from) as job:
            for _ in range(generations):
                locations.append((await self._generation(job)).location)
            await cancel_and_wait(job)
        return locations, self.sink.results[before:]

    async def _generation(self, job: JobClient) -> CompletedCheckpoint:
        self.appended += 1
        records = [(self.appended, key) for key in range(KEYS)]
        self.topic.append(records, partition_of=lambda record: record[1])
        await self.arrivals.wait_for(records)
        return await job.trigger_checkpoint()


async def test_latest_after_a_run_restored_from_an_older_checkpoint_is_that_runs_newest(
    tmp_path: Path,
) -> None:
    job = Generations((tmp_path / "checkpoints").as_uri())
    first_run, _ = await job.run(4)  # checkpoints 1..4, counts 1..4
    await job.run(1, restore_from=first_run[1])  # from checkpoint 2: counts 3..5

    _, committed = await job.run(1, restore_from="latest")

    # the newest checkpoint held count 5 and the offsets after it: only count 6 follows
    assert sorted(committed) == [(key, 6) for key in range(KEYS)]


async def test_a_restored_run_never_reuses_a_checkpoint_id_its_storage_holds(
    tmp_path: Path,
) -> None:
    job = Generations((tmp_path / "checkpoints").as_uri())
    first_run, _ = await job.run(4)

    restored_run, _ = await job.run(1, restore_from=first_run[1])

    assert Path(restored_run[0]).parent.name == "chk-5"
    ids = await FileSystemCheckpointStorage(tmp_path / "checkpoints").completed("counts")
    assert ids == [1, 2, 3, 4, 5]
