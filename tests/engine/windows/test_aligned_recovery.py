"""Aligned windows survive failures and move with their keys, exactly once.

The windows here take the aligned path (tumbling and sliding event-time windows with
the built-in trigger and an aggregate with a window function): their contents, folded a
batch at a time, must be in keyed state at every checkpoint and savepoint.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    AggregateFunction,
    ProcessWindowFunction,
    RestartStrategy,
    SlidingEventTimeWindows,
    StreamEnvironment,
    TimeWindow,
    TumblingEventTimeWindows,
    WatermarkStrategy,
    WindowContext,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from lockgate.engine.windows.assigners import WindowAssigner
from tests.engine.jobs.savepoints import Topic, TopicSource

Event = tuple[str, float, int]  # (key, event time, value)
Total = tuple[str, float, float, int]  # (key, window start, window end, sum)
DISORDER = 3.0
BY_TIME = WatermarkStrategy.for_bounded_out_of_orderness(DISORDER).with_timestamp_assigner(
    lambda event: event[1]
)


class Sum(AggregateFunction[Event, int, int]):
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Event, accumulator: int) -> int:
        return accumulator + value[2]

    def get_result(self, accumulator: int) -> int:
        return accumulator


class WithWindow(ProcessWindowFunction[int, Total, str]):
    def process(self, key: str, context: WindowContext, elements: list[int]) -> list[Total]:
        window = context.window
        assert isinstance(window, TimeWindow)
        return [(key, window.start, window.end, elements[0])]


class SumAll(ProcessWindowFunction[Event, Total, str]):
    def process(self, key: str, context: WindowContext, elements: list[Event]) -> list[Total]:
        window = context.window
        assert isinstance(window, TimeWindow)
        return [(key, window.start, window.end, sum(event[2] for event in elements))]


def summed(windowed: Any) -> Any:
    return windowed.aggregate(Sum(), WithWindow(), uid="totals")


def kept(windowed: Any) -> Any:
    return windowed.process(SumAll(), uid="totals")  # the windows keep their records


def events(count: int, *, keys: int = 5, seed: int = 7) -> list[Event]:
    """Events 0.25 s apart over ``keys`` keys, shuffled by less than ``DISORDER`` seconds."""
    draw = random.Random(seed)
    timed = [
        (n * 0.25 + draw.uniform(0, DISORDER - 0.01), (f"k{n % keys}", n * 0.25, n % 10))
        for n in range(count)
    ]
    return [event for _, event in sorted(timed)]


def totals(stream: list[Event], assigner: WindowAssigner) -> Counter[Total]:
    """Per key and window, the sum of values: a plain loop."""
    sums: dict[tuple[str, float, float], int] = {}
    for key, time, value in stream:
        for window in assigner.assign_windows(time):
            assert isinstance(window, TimeWindow)
            slot = (key, window.start, window.end)
            sums[slot] = sums.get(slot, 0) + value
    return Counter((*slot, total) for slot, total in sums.items())


@pytest.mark.parametrize("backend", ["memory", "rocksdb"])
@pytest.mark.parametrize(
    "assigner", [TumblingEventTimeWindows.of(10.0), SlidingEventTimeWindows.of(10.0, 2.5)]
)
@pytest.mark.parametrize("watermarks", [0.0, 3_600.0], ids=["every-batch", "at-the-end"])
@pytest.mark.parametrize("function", [summed, kept])
async def test_aligned_windows_emit_each_total_once_through_a_failure_after_a_checkpoint(
    backend: str, assigner: WindowAssigner, watermarks: float, function: Any, tmp_path: Path
) -> None:
    # With watermarks only at the end, every checkpoint finds contents the runner folded
    # since its last flush: the snapshot must flush them.
    fail, stream = FailOnce(), events(2_000)
    # Two sentinels in a row: the second passes only once a checkpoint was triggered after
    # the first, so the restored checkpoint holds windows that are still open.
    elements: list[Any] = [*stream[:1_001], AwaitCheckpoint(), AwaitCheckpoint()]
    elements += [*stream[1_001:1_050], fail, *stream[1_050:]]
    env = StreamEnvironment(parallelism=2, batch_size=64, auto_watermark_interval=watermarks)
    env.enable_checkpointing(0.01)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    env.set_state_backend(backend, path=tmp_path if backend == "rocksdb" else None)
    sink = CollectSink[Total]()
    windowed = (
        env.from_source(
            CollectionSource(elements), uid="events", parallelism=1, watermark_strategy=BY_TIME
        )
        .key_by(lambda event: event[0])
        .window(assigner)
    )
    function(windowed).sink_to(sink, uid="out")

    await env.execute("totals")

    assert fail.fired
    assert Counter(sink.results) == totals(stream, assigner)


def totals_job(topic: Topic, sink: CollectSink[Total], parallelism: int) -> StreamEnvironment:
    env = StreamEnvironment(  # no watermark before the end: the savepoint must flush
        parallelism=parallelism, max_parallelism=16, batch_size=16, auto_watermark_interval=3_600.0
    )
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed, uid="passed")
        .assign_timestamps_and_watermarks(BY_TIME, uid="event-time")
        .key_by(lambda event: event[0])
        .window(TumblingEventTimeWindows.of(1_000.0))
        .aggregate(Sum(), WithWindow(), uid="totals")
        .sink_to(sink, uid="out")
    )
    return env


async def test_aligned_window_contents_move_with_their_keys_from_2_to_3_subtasks(
    tmp_path: Path,
) -> None:
    topic, first, second = Topic(partitions=1), CollectSink[Total](), CollectSink[Total]()
    everything = events(1_000, keys=7)  # all within the one window [0, 1000)
    topic.append(everything[:601], partition_of=lambda _: 0)
    async with totals_job(topic, first, parallelism=2).start("before") as job:
        await topic.all_read.wait()
        savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    topic.append(everything[601:], partition_of=lambda _: 0)
    topic.close()

    await totals_job(topic, second, parallelism=3).execute("after", restore_from=savepoint)

    assert first.results == []  # the window was open at the savepoint
    assert Counter(second.results) == totals(everything, TumblingEventTimeWindows.of(1_000.0))
