"""The keyed count job of the RocksDB incremental checkpoint and restore tests, and what they
read of its checkpoints, folders and output."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from lockgate.connectors import CollectSink
from lockgate.engine import CompletedCheckpoint, StreamEnvironment
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.savepoints import Topic, TopicSource

KEYS = 20_000


def counts_job(
    topic: Topic,
    sink: CollectSink[Any],
    tmp_path: Path,
    *,
    backend: str,
    parallelism: int = 2,
    **compaction: Any,
) -> StreamEnvironment:
    """A keyed count of ``topic``'s events on ``backend`` (``rocksdb-incremental``: options)."""
    env = StreamEnvironment(parallelism=parallelism, max_parallelism=32)
    env.enable_checkpointing(max_retained=1)
    env.set_checkpoint_storage((tmp_path / "checkpoints").as_uri())
    name, _, incremental = backend.partition("-")
    path = tmp_path / "databases" if name == "rocksdb" else None
    env.set_state_backend(name, path=path, incremental=bool(incremental), **compaction)
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed)
        .key_by(lambda event: event[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="out")
    )
    return env


def touch(topic: Topic, keys: range) -> None:
    topic.append([(key, 1) for key in keys], partition_of=lambda event: event[0])


def shared_of(completed: CompletedCheckpoint) -> dict[str, int]:
    """Location -> size of every shared file the checkpoint's ``counts`` state uses."""
    handles = completed.metadata.operators["counts"].handles
    return {s.location: s.size for h in handles if h is not None for s in h.shared_files}


def shared_folder(tmp_path: Path) -> set[str]:
    return {path.name for path in (tmp_path / "checkpoints" / "counts" / "shared").iterdir()}


def leftovers(path: Path) -> list[Path]:
    return sorted(path.iterdir())


def counts_of(sink: CollectSink[Any]) -> dict[int, int]:
    latest: dict[int, int] = defaultdict(int)
    for key, count in sink.results:
        latest[key] = max(latest[key], count)
    return dict(latest)


async def checkpointed_twice(
    topic: Topic, sink: CollectSink[Any], tmp_path: Path, backend: str, **compaction: Any
) -> CompletedCheckpoint:
    """Run a job over ``KEYS`` keys, checkpoint, touch 1% of them, checkpoint and cancel.

    Returns the second checkpoint.
    """
    touch(topic, range(KEYS))
    env = counts_job(topic, sink, tmp_path, backend=backend, **compaction)
    async with env.start("counts") as job:
        await topic.all_read.wait()
        await job.trigger_checkpoint()
        touch(topic, range(KEYS // 100))
        await topic.all_read.wait()
        second = await job.trigger_checkpoint()
        await cancel_and_wait(job)
    return second
