"""Cancel after a retained checkpoint and resume from it, three generations in a row.

On every backend, with full and incremental checkpoints (the RocksDB backend's incremental
checkpoints upload its SST files and restore from them).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectSink
from lockgate.engine import StreamEnvironment
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.savepoints import Topic, TopicSource

KEYS, PER_GENERATION, GENERATIONS = 12, 40, 3
BACKENDS = ["memory", "memory-incremental", "rocksdb", "rocksdb-incremental"]


def counts_job(
    topic: Topic, sink: CollectSink[Any], storage: str, backend: str
) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, max_parallelism=32)
    env.enable_checkpointing(max_retained=2)
    env.set_checkpoint_storage(storage)
    name, _, incremental = backend.partition("-")
    env.set_state_backend(name, incremental=bool(incremental))
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed)
        .key_by(lambda event: event[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="out")
    )
    return env


@pytest.mark.parametrize("backend", BACKENDS)
async def test_three_generations_each_resume_from_the_checkpoint_the_last_one_retained(
    backend: str, tmp_path: Path
) -> None:
    topic, sink = Topic(3), CollectSink[Any]()
    storage = (tmp_path / "checkpoints").as_uri()
    restored_ids = []
    for generation in range(GENERATIONS):
        topic.append(
            [(key, 1) for _ in range(PER_GENERATION) for key in range(KEYS)],
            partition_of=lambda event: event[0],
        )
        env = counts_job(topic, sink, storage, backend)
        async with env.start("chain", restore_from="latest" if generation else None) as job:
            await topic.all_read.wait()
            completed = await job.trigger_checkpoint()
            restored_ids.append(completed.checkpoint_id)
            await cancel_and_wait(job)

    running: dict[int, list[int]] = defaultdict(list)
    for key, count in sink.results:
        running[key].append(count)
    expected = list(range(1, PER_GENERATION * GENERATIONS + 1))
    assert running == {key: expected for key in range(KEYS)}
    assert restored_ids == sorted(set(restored_ids))  # each generation went on from the last
