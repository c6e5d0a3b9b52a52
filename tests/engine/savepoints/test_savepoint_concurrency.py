"""A savepoint still being written when a newer checkpoint completes is not subsumed.

As in Flink, a completed checkpoint aborts the older checkpoints still pending, but never a
pending savepoint: a person asked for it. Here a savepoint's encoding is held in its worker
thread (a registered type whose ``to_plain`` waits), while a checkpoint taken after it
completes. The state is large enough (``KEYS``) to be encoded off the event loop.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from lockgate.connectors import CollectSink
from lockgate.engine import CompletedCheckpoint, StreamEnvironment
from tests.engine.jobs.savepoints import Topic, TopicSource, has_metadata

KEYS = 25_000  # more entries than a subtask encodes on the event loop


class Count:
    """A running count kept in keyed state; savepoints encode it through ``HeldEncoding``."""

    def __init__(self, value: int) -> None:
        self.value = value


class HeldEncoding:
    """Encodes ``Count`` for savepoints, but only once the test releases it."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def to_plain(self, count: Count) -> int:
        self.entered.set()
        self.release.wait(timeout=10)
        return count.value


def counting_job(topic: Topic, encoding: HeldEncoding) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=1)
    env.enable_checkpointing(None, max_concurrent=2)
    env.set_checkpoint_storage("memory://")
    env.register_type(Count, to_plain=encoding.to_plain, from_plain=Count)
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed)
        .map(lambda key: (key, Count(1)))
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], Count(a[1].value + b[1].value)), uid="counts")
        .sink_to(CollectSink(), uid="out")
    )
    return env


async def test_a_newer_checkpoint_completing_leaves_a_pending_savepoint_alone(
    tmp_path: Path,
) -> None:
    topic, encoding = Topic(partitions=1), HeldEncoding()
    topic.append(range(KEYS), partition_of=lambda _: 0)
    savepoints: list[str] = []

    async def take_savepoint(job: Any) -> None:
        savepoints.append(await job.trigger_savepoint(tmp_path.as_uri()))

    async with counting_job(topic, encoding).start("held") as job:
        await topic.all_read.wait()
        async with anyio.create_task_group() as group:
            group.start_soon(take_savepoint, job)
            assert await anyio.to_thread.run_sync(encoding.entered.wait, 10)
            checkpoint: CompletedCheckpoint = await job.trigger_checkpoint()
            assert savepoints == []  # still being written
            encoding.release.set()
        job.cancel()

    assert checkpoint.checkpoint_id == 2  # the savepoint was checkpoint 1
    assert len(savepoints) == 1
    assert has_metadata(savepoints[0])
