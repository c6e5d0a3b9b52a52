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
    JobStatus,
    StreamEnvironment,
)
from tests.engine.jobs.rescaling import Registering
from tests.engine.jobs.savepoints import Topic, TopicSource, has_metadata

KEYS, FIRST, MORE, MAX_PARALLELISM, PARTITIONS = 42, 1_000, 500, 13, 4


def totals_job(parallelism: int, topic: Topic, sink: CollectSink[Any]) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=parallelism, max_parallelism=MAX_PARALLELISM)
    env.enable_checkpointing()
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed)
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
    Registering.reset()
    topic, sink = Topic(PARTITIONS), CollectSink[Any]()
    topic.append(events(FIRST), partition_of=lambda event: event[0])
    async with totals_job(before, topic, sink).start("totals") as job:
        await topic.all_read.wait()
        savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    assert job.status is JobStatus.FINISHED
    committed_at_stop = len(sink.results)
    Registering.reset(restored=False)

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
    assert (
        sum(Registering.restored_counts) == KEYS * FIRST
    )  # list state split, nothing lost or doubled
    assert [
        list(range(before))
    ] * after == Registering.restored_unions  # the whole union, everywhere
    assert has_metadata(savepoint)
