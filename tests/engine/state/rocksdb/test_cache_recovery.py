"""Jobs on RocksDB restore exactly what their write-back caches held at each checkpoint.

With few keys every write of the checkpoint lives only in the cache until the snapshot
writes it back; with 10,000 keys and a cache of 100 entries nearly all of it was evicted
to RocksDB before. Either way, after a failure injected after a completed checkpoint, the
running counts go on exactly: no count lost, none twice. And a checkpoint whose window was
held open while the job changed every entry it held restores the state of its barrier.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    KeyedProcessFunction,
    ListStateDescriptor,
    ProcessContext,
    RestartStrategy,
    RuntimeContext,
    StreamEnvironment,
    ValueStateDescriptor,
)
from lockgate.engine.state.rocksdb.frozen import Windows
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.jobs.savepoints import Topic, TopicSource


def numbers(count: int, fail: FailOnce) -> list[Any]:
    """0..count-1 with a completed checkpoint awaited at 40%, then a failure at 60%."""
    first, second = count * 2 // 5, count * 3 // 5
    return [*range(first), AwaitCheckpoint(), *range(first, second), fail, *range(second, count)]


def counts_job(
    tmp_path: Path, values: list[Any], keys: int, sink: CollectSink[Any], **rocksdb: Any
) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, batch_size=256)
    env.enable_checkpointing(0.05)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    env.set_state_backend("rocksdb", path=tmp_path / "databases", **rocksdb)
    (
        env.from_source(CollectionSource(values), uid="numbers", parallelism=1)
        .map(lambda value: (value % keys, 1))
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="counts")
        .sink_to(sink, uid="out")
    )
    return env


def every_count(keys: int, per_key: int) -> list[tuple[int, int]]:
    return [(key, count) for key in range(keys) for count in range(1, per_key + 1)]


@pytest.mark.parametrize("incremental", [False, True])
async def test_a_restore_after_a_failure_sees_every_write_the_cache_held(
    tmp_path: Path, incremental: bool
) -> None:
    fail, sink = FailOnce(), CollectSink[Any]()
    env = counts_job(tmp_path, numbers(4_000, fail), 40, sink, incremental=incremental)

    async with env.start("counts") as job:
        await job.wait()

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert job.metrics().attempt == 1
    assert sorted(sink.results) == every_count(40, 100)


@pytest.mark.parametrize("incremental", [False, True])
async def test_state_a_hundred_times_larger_than_the_cache_restores_exactly(
    tmp_path: Path, incremental: bool
) -> None:
    fail, sink = FailOnce(), CollectSink[Any]()
    values = numbers(30_000, fail)
    env = counts_job(tmp_path, values, 10_000, sink, incremental=incremental, cache_entries=100)

    async with env.start("counts") as job:
        await job.wait()

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert job.metrics().attempt == 1
    assert sorted(sink.results) == every_count(10_000, 3)


class HeldWindows:
    """Holds every RocksDB snapshot's window open while ``go`` is clear.

    A window is closed by the snapshot's asynchronous part, in a worker thread: that
    thread waits here (``closing`` tells it got there), so the job goes on changing its
    state on the event loop meanwhile; ``kept`` records, on release, how many entries the
    cache had copied on write.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.closing, self.go = threading.Event(), threading.Event()
        self.go.set()
        self.kept: list[int] = []
        close_through, event_loop = Windows.close_through, threading.get_ident()

        def held(windows: Windows, frozen: Any) -> None:
            if threading.get_ident() != event_loop and not self.go.is_set():
                self.closing.set()
                assert self.go.wait(timeout=60), "the test never let the window close"
                self.kept.append(windows.kept)
            close_through(windows, frozen)

        monkeypatch.setattr(Windows, "close_through", held)


class Progress:
    """Counts the records a job's function processed; ``reached(n)`` waits for ``n``."""

    def __init__(self) -> None:
        self.processed = 0
        self._target, self._reached = 0, anyio.Event()

    def count(self) -> None:
        self.processed += 1
        if self.processed >= self._target:
            self._reached.set()

    async def reached(self, target: int) -> None:
        self._target, self._reached = target, anyio.Event()
        if self.processed >= target:
            return
        await self._reached.wait()

    def __deepcopy__(self, memo: dict[int, Any]) -> Progress:
        return self


class Rounds(KeyedProcessFunction[int, tuple[Any, int], tuple[Any, int]]):
    """Per key: a count and the list of its records (appended in place); emits the count."""

    def __init__(self, progress: Progress, fail: FailOnce) -> None:
        self.progress, self.fail = progress, fail

    def open(self, context: RuntimeContext) -> None:
        self.count = context.get_state(ValueStateDescriptor[int]("count", default=0))
        self.seen = context.get_state(ListStateDescriptor[int]("seen"))

    def process_element(
        self, value: tuple[Any, int], ctx: ProcessContext[tuple[Any, int]]
    ) -> Iterator[tuple[Any, int]]:
        self.progress.count()
        if value[0] == "poison":
            self.fail.maybe_fire()
            return
        count = self.count.value() + 1
        self.count.update(count)
        self.seen.add(value[1])
        assert len(self.seen.get()) == count, f"key {value[0]}: the list and the count differ"
        yield (value[0], count)


HELD_KEYS = 12_000  # 24,000 entries: the checkpointer reads the snapshot in a worker thread


@pytest.mark.parametrize("incremental", [False, True])
async def test_a_restore_from_a_checkpoint_whose_window_stayed_open_while_state_changed_is_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, incremental: bool
) -> None:
    held, progress, fail, sink = (
        HeldWindows(monkeypatch),
        Progress(),
        FailOnce(),
        CollectSink[Any](),
    )
    topic = Topic(1)
    env = StreamEnvironment(parallelism=1)
    env.enable_checkpointing(max_retained=1)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    path = tmp_path / "databases"
    env.set_state_backend("rocksdb", path=path, incremental=incremental, cache_entries=30_000)
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed)
        .key_by(lambda event: event[0])
        .process(Rounds(progress, fail), uid="rounds")
        .sink_to(sink, uid="out")
    )

    async with env.start("held") as job:
        for round_ in (1, 2):
            touch(topic, range(HELD_KEYS), round_)
            await topic.all_read.wait()
            if round_ == 1:
                await job.trigger_checkpoint()
        held.go.clear()
        async with anyio.create_task_group() as group:
            group.start_soon(job.trigger_checkpoint)  # the second: its window is held open
            await anyio.to_thread.run_sync(held.closing.wait)
            touch(topic, range(HELD_KEYS), 3)  # changes every entry the window holds
            await progress.reached(3 * HELD_KEYS)
            held.go.set()
        topic.append([("poison", 0)], partition_of=lambda event: 0)
        topic.close()
        await job.wait()

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert held.kept and held.kept[0] >= 2 * HELD_KEYS, "no entry was changed in the window"
    assert job.metrics().attempt == 1
    assert sorted(sink.results) == every_count(HELD_KEYS, 3)


def touch(topic: Topic, keys: range, round_: int) -> None:
    topic.append([(key, round_) for key in keys], partition_of=lambda event: 0)
