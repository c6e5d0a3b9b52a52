"""A custom trigger's state and timers survive failures and move with their keys on rescaling."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    CountTrigger,
    EventTimeSessionWindows,
    OutputTag,
    ProcessWindowFunction,
    RestartStrategy,
    StreamEnvironment,
    TimeWindow,
    TumblingEventTimeWindows,
    WatermarkStrategy,
    WindowContext,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.jobs.savepoints import Topic, TopicSource
from tests.engine.jobs.windows import Event, EveryThirdAndAtEnd, Fired, Seen, every_third_and_at_end

DISORDER = 3.0
BY_TIME = WatermarkStrategy.for_bounded_out_of_orderness(DISORDER).with_timestamp_assigner(
    lambda event: event[1]
)


def events(count: int, *, keys: int = 5, seed: int = 3) -> list[Event]:
    """Events 0.25 s apart over ``keys`` keys, shuffled by less than ``DISORDER`` seconds."""
    draw = random.Random(seed)
    timed = [
        (n * 0.25 + draw.uniform(0, DISORDER - 0.01), (f"k{n % keys}", n * 0.25, n))
        for n in range(count)
    ]
    return [event for _, event in sorted(timed)]


def counted(fired: list[Fired]) -> Counter[tuple[str, float, float, tuple[int, ...]]]:
    return Counter((key, start, end, tuple(values)) for key, start, end, values in fired)


@pytest.mark.parametrize("backend", ["memory", "rocksdb"])
async def test_a_failure_after_a_checkpoint_restores_trigger_state_and_timers_exactly(
    backend: str, tmp_path: Path
) -> None:
    # Key "z" has four records in [370, 380), all before the checkpoint: its window's end,
    # after the checkpoint, fires again after the restore only by the timer it restored.
    fail, stream = FailOnce(), events(3_000)
    at = next(index for index, event in enumerate(stream) if event[1] >= 373.0)
    lonely = [("z", 370.5 + n / 2, -n) for n in range(4)]
    everything = [*stream[:at], *lonely, *stream[at:]]
    assert at + 4 < 1_501
    # Two sentinels in a row: the second passes only with a checkpoint triggered after the
    # first was reached (one checkpoint at a time), so the one restored holds the records of
    # "z". The failure comes before the watermark reaches 380, so that checkpoint has not
    # fired z's window yet.
    elements: list[Any] = [*everything[:1_501], AwaitCheckpoint(), AwaitCheckpoint()]
    elements += [*everything[1_501:1_510], fail, *everything[1_510:]]
    assert max(event[1] for event in everything[:1_510]) < 380.0 + DISORDER
    env = StreamEnvironment(parallelism=2, batch_size=64, auto_watermark_interval=0.0)
    env.enable_checkpointing(0.01)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=2, delay=0.0))
    env.set_state_backend(backend, path=tmp_path if backend == "rocksdb" else None)
    sink = CollectSink[Any]()
    (
        env.from_source(
            CollectionSource(elements), uid="events", parallelism=1, watermark_strategy=BY_TIME
        )
        .key_by(lambda event: event[0])
        .window(TumblingEventTimeWindows.of(10.0))
        .trigger(EveryThirdAndAtEnd(purging=True))
        .process(Seen(), uid="thirds")
        .sink_to(sink, uid="out")
    )

    await env.execute("thirds")

    assert fail.fired
    # each window's records are counted where the checkpoint left them: a count restored
    # wrong (or lost) moves every later firing of its window
    assert counted(sink.results) == counted(every_third_and_at_end(everything, 10.0, purging=True))


def thirds_job(topic: Topic, sink: CollectSink[Any], parallelism: int) -> StreamEnvironment:
    env = StreamEnvironment(
        parallelism=parallelism, max_parallelism=16, batch_size=16, auto_watermark_interval=0.0
    )
    (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed, uid="passed")
        .assign_timestamps_and_watermarks(BY_TIME, uid="event-time")
        .key_by(lambda event: event[0])
        .window(TumblingEventTimeWindows.of(1_000.0))
        .trigger(EveryThirdAndAtEnd(purging=True))
        .process(Seen(), uid="thirds")
        .sink_to(sink, uid="out")
    )
    return env


async def test_a_custom_triggers_state_moves_with_its_keys_from_2_to_3_subtasks(
    tmp_path: Path,
) -> None:
    topic, first, second = Topic(partitions=1), CollectSink[Any](), CollectSink[Any]()
    everything = events(1_000, keys=7)  # all within the one window [0, 1000)
    topic.append(everything[:601], partition_of=lambda _: 0)
    async with thirds_job(topic, first, parallelism=2).start("before") as job:
        await topic.all_read.wait()
        savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    rest = [event for event in everything[601:] if event[0] != "k6"]  # k6's end: by its timer
    topic.append(rest, partition_of=lambda _: 0)
    topic.close()

    await thirds_job(topic, second, parallelism=3).execute("after", restore_from=savepoint)

    # The savepoint's pending transaction (the thirds fired before it) commits again into
    # the restored job's sink, as Flink re-commits it: the second sink holds everything.
    expected = every_third_and_at_end(everything[:601] + rest, 1_000.0, purging=True)
    assert counted(second.results) == counted(expected)
    assert first.results and counted(first.results) <= counted(second.results)


CLEARED = OutputTag[tuple[float, float]]("cleared")


class ReportsClear(ProcessWindowFunction[Event, Any, str]):
    """Emits nothing when a window fires; reports each window it is told is cleaned up."""

    def process(self, key: str, context: WindowContext, elements: list[Event]) -> list[Any]:
        return []

    def clear(self, context: WindowContext) -> None:
        window = context.window
        assert isinstance(window, TimeWindow)
        context.output(CLEARED, (window.start, window.end))


def sessions_job(topic: Topic, cleared: CollectSink[Any]) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=1, batch_size=1, auto_watermark_interval=0.0)
    late_by_100 = WatermarkStrategy.for_bounded_out_of_orderness(100.0).with_timestamp_assigner(
        lambda event: event[1]
    )
    sessions = (
        env.from_source(TopicSource(topic), uid="events")
        .map(topic.passed, uid="passed")
        .assign_timestamps_and_watermarks(late_by_100, uid="event-time")
        .key_by(lambda event: event[0])
        .window(EventTimeSessionWindows.with_gap(5.0))
        .trigger(CountTrigger.of(10))  # its state merges; it sets no timers
        .process(ReportsClear(), uid="sessions")
    )
    sessions.sink_to(CollectSink[Any](), uid="out")
    sessions.side_output(CLEARED).sink_to(cleared, uid="cleared")
    return env


async def test_restored_sessions_of_two_keys_keep_their_cleanup_timers_apart(
    tmp_path: Path,
) -> None:
    # After the restore, "a" merges its restored session [1, 6) right after a record of
    # "b", before a timer of "a" was touched in the new attempt; then "b" opens a session
    # with the bounds of a session of "a", [20, 25). Each key's timers stay its own: every
    # session is cleaned up at the end of input, b's [20, 25) too.
    topic, first, second = Topic(partitions=1), CollectSink[Any](), CollectSink[Any]()
    topic.append([("a", 1.0, 1), ("a", 20.0, 2)], partition_of=lambda _: 0)
    async with sessions_job(topic, first).start("before") as job:
        await topic.all_read.wait()
        savepoint = await job.stop_with_savepoint(tmp_path.as_uri())
    after = [("a", 20.0, 3), ("b", 50.0, 4), ("a", 3.0, 5), ("b", 20.0, 6)]
    topic.append(after, partition_of=lambda _: 0)
    topic.close()

    await sessions_job(topic, second).execute("after", restore_from=savepoint)

    assert sorted(second.results) == [(1.0, 8.0), (20.0, 25.0), (20.0, 25.0), (50.0, 55.0)]
