"""A subtask that finishes while a savepoint is pending takes its part of the savepoint.

No barrier can reach it through its ended channels, so the coordinator triggers it when it
reports that it finished; that trigger must carry the savepoint's options, or its state
would be written as a checkpoint, outside the savepoint folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import StreamEnvironment
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.savepoints import Topic, TopicSource
from tests.engine.jobs.unaligned import GatedCollectSink


def numbers_job(sink: CollectSink[Any], topic: Topic) -> StreamEnvironment:
    """A bounded branch (numbers -> out) beside an endless one that keeps the job running."""
    env = StreamEnvironment(batch_size=16)
    env.enable_checkpointing(None)
    (
        env.from_source(CollectionSource(range(100)), uid="numbers", parallelism=1)
        .rebalance()
        .sink_to(sink, uid="out", parallelism=2)
    )
    env.from_source(TopicSource(topic), uid="topic").sink_to(CollectSink(), uid="topic-out")
    return env


async def savepoint(job: Any, folder: Path, taken: list[str]) -> None:
    taken.append(await job.trigger_savepoint(folder.as_uri()))


def state_files(folder: str) -> list[str]:
    return sorted(path.name.rsplit("-", 2)[0] for path in Path(folder).iterdir())


async def test_a_sink_that_finishes_while_a_savepoint_is_pending_writes_into_it(
    tmp_path: Path,
) -> None:
    sink, topic = GatedCollectSink(), Topic(1)
    taken: list[str] = []
    with anyio.fail_after(10):
        async with numbers_job(sink, topic).start("numbers") as job:
            await sink.writing.wait()
            await anyio.wait_all_tasks_blocked()  # the source has read everything and ended
            async with anyio.create_task_group() as group:
                group.start_soon(savepoint, job, tmp_path, taken)
                await anyio.wait_all_tasks_blocked()
                sink.release.set()  # the sinks finish, then take their part
            await cancel_and_wait(job)
    restored: CollectSink[Any] = CollectSink()
    topic.close()

    with anyio.fail_after(10):
        await numbers_job(restored, topic).execute("numbers", restore_from=taken[0])

    assert await anyio.to_thread.run_sync(state_files, taken[0]) == [
        "_metadata",
        "numbers",
        "out",
        "out",
        "topic",
        "topic-out",
    ]
    assert sorted(restored.results) == list(range(100))  # pre-committed at the savepoint
