"""A custom trigger's state and timers survive failures and move with their keys on rescaling."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    RestartStrategy,
    StreamEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
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
