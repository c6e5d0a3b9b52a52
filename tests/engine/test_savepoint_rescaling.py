"""Rescaling through a savepoint: stop at one parallelism, restore at another, keep every key.

42 keys x 1,000 events with max_parallelism 13; stop with a savepoint at parallelism 2 and
restore at 4 (and 4 -> 2); 500 more events per key; every key's running totals are exact,
operator list state keeps its sum and union state reaches every subtask whole.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import (
    FunctionInitializationContext,
    FunctionSnapshotContext,
    JobStatus,
    ListStateDescriptor,
    StreamEnvironment,
)
from tests.engine.savepoint_jobs import Topic, TopicSource, has_metadata

KEYS, FIRST, MORE, MAX_PARALLELISM, PARTITIONS = 42, 1_000, 500, 13, 4

RESTORED_COUNTS: list[int] = []
RESTORED_UNIONS: list[list[int]] = []


class Registering:
    """Passes events on, counting them in list state; registers its subtask in union state."""

    next_index = 0

    def initialize_state(self, context: FunctionInitializationContext) -> None:
        self.index = Registering.next_index
        Registering.next_index += 1
        store = context.operator_state_store
        self.counts = store.get_list_state(ListStateDescriptor[int]("counts"))
        self.indexes = store.get_union_list_state(ListStateDescriptor[int]("indexes"))
        self.seen = 0
        if context.is_restored:
            RESTORED_COUNTS.extend(self.counts.get())
            RESTORED_UNIONS.append(sorted(self.indexes.get()))

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        self.counts.update([*self.counts.get(), self.seen])
        self.seen = 0
        if self.index not in self.indexes.get():
            self.indexes.update([*self.indexes.get(), self.index])

    def __call__(self, event: tuple[int, int]) -> tuple[int, int]:
        self.seen += 1
        return event


def totals_job(parallelism: int, topic: Topic, sink: CollectSink[Any]) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=parallelism, max_parallelism=MAX_PARALLELISM)
    env.enable_checkpointing()
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(Registering(), uid="counting")
        .key_by(lambda event: event[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="totals")
        .sink_to(sink, uid="out")
    )
    return env


def events(per_key: int) -> list[tuple[int, int]]:
    return [(key, 1) for _ in range(per_key) for key in range(KEYS)]


@pytest.mark.parametrize(("before", "after"), [(2, 4), (4, 2)])
async def test_a_job_stopped_with_a_savepoint_resumes_at_another_parallelism(
    before: int, after: int, tmp_path: Path
) -> None:
    RESTORED_COUNTS.clear()
    RESTORED_UNIONS.clear()
    Registering.next_index = 0
    topic, sink = Topic(PARTITIONS), CollectSink[Any]()
    topic.append(events(FIRST), partition_of=lambda event: event[0])
    async with totals_job(before, topic, sink).start("totals") as job:
        await topic.all_read.wait()
        savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    assert job.status is JobStatus.FINISHED
    committed_at_stop = len(sink.results)
    Registering.next_index = 0

    topic.append(events(MORE), partition_of=lambda event: event[0])
    topic.close()
    await totals_job(after, topic, sink).execute("totals", restore_from=savepoint)

    assert committed_at_stop == KEYS * FIRST  # the stop savepoint committed everything
    running: dict[int, list[int]] = defaultdict(list)
    for key, total in sink.results:
        running[key].append(total)
    assert sorted(running) == list(range(KEYS))
    for key, totals in running.items():
        assert totals == list(range(1, FIRST + MORE + 1)), f"key {key}"
    assert sum(RESTORED_COUNTS) == KEYS * FIRST  # list state split, nothing lost or doubled
    assert [list(range(before))] * after == RESTORED_UNIONS  # the whole union, everywhere
    assert has_metadata(savepoint)
