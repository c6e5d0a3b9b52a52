"""Jobs restored into RocksDB at another parallelism open their incremental checkpoint's files.

No subtask reads plain key groups: each takes the old files with the largest overlap of its
key groups, the others deleted, and the rest of them inserted from the other old files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectSink
from lockgate.engine.restore import native
from lockgate.engine.state.rocksdb.store import RocksDBKeyedStateStore
from tests.engine.jobs.checkpoints import cancel_and_wait
from tests.engine.jobs.rocksdb import KEYS, counts_job, counts_of, leftovers, touch
from tests.engine.jobs.savepoints import Topic


def refuse_key_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any restore that reads files into key groups or writes key groups into RocksDB."""

    def read_key_groups(*args: Any) -> None:
        raise AssertionError("a native snapshot was read into plain key groups")

    load = RocksDBKeyedStateStore.restore

    def load_key_groups(store: RocksDBKeyedStateStore, groups: Any, kinds: Any = None) -> None:
        if any(groups.values()):  # operators without keyed state restore nothing
            raise AssertionError("plain key groups were written into RocksDB")
        load(store, groups, kinds)

    monkeypatch.setattr(native, "native_key_groups", read_key_groups)
    monkeypatch.setattr(RocksDBKeyedStateStore, "restore", load_key_groups)


async def checkpointed_at(topic: Topic, tmp_path: Path, parallelism: int) -> None:
    """Count every key once at ``parallelism``, then 1% once more, checkpointing after each."""
    touch(topic, range(KEYS))
    env = counts_job(
        topic, CollectSink(), tmp_path, backend="rocksdb-incremental", parallelism=parallelism
    )
    async with env.start("counts") as job:
        await topic.all_read.wait()
        await job.trigger_checkpoint()
        touch(topic, range(KEYS // 100))
        await topic.all_read.wait()
        await job.trigger_checkpoint()
        await cancel_and_wait(job)


@pytest.mark.parametrize(("before", "after"), [(2, 3), (3, 2)])
async def test_a_rescaled_restore_from_files_gives_every_count_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: int, after: int
) -> None:
    topic, sink = Topic(2), CollectSink[Any]()
    await checkpointed_at(topic, tmp_path, before)
    refuse_key_groups(monkeypatch)

    touch(topic, range(KEYS))
    topic.close()
    env = counts_job(topic, sink, tmp_path, backend="rocksdb-incremental", parallelism=after)
    async with env.start("counts", restore_from="latest") as job:
        await job.wait()

    restored = [statistics.restore for statistics in job.metrics().keyed_state("counts")]
    assert restored == ["files"] * after
    assert counts_of(sink) == {key: 3 if key < KEYS // 100 else 2 for key in range(KEYS)}
    assert leftovers(tmp_path / "databases") == []


async def test_a_rescaled_restore_into_the_memory_backend_reads_key_groups(
    tmp_path: Path,
) -> None:
    topic, sink = Topic(2), CollectSink[Any]()
    await checkpointed_at(topic, tmp_path, 2)

    touch(topic, range(KEYS))
    topic.close()
    env = counts_job(topic, sink, tmp_path, backend="memory", parallelism=3)
    async with env.start("counts", restore_from="latest") as job:
        await job.wait()

    restored = [statistics.restore for statistics in job.metrics().keyed_state("counts")]
    assert restored == ["key_groups"] * 3
    assert counts_of(sink) == {key: 3 if key < KEYS // 100 else 2 for key in range(KEYS)}
