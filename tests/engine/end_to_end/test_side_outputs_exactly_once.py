"""Side outputs under failure, as Flink tests exactly-once: a failure fires once after a
completed checkpoint, provably; transactional sinks on the main and the side output commit
every record exactly once; an unaligned checkpoint of a backpressured side edge restores."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    CompletedCheckpoint,
    KeyedProcessFunction,
    MemoryCheckpointStorage,
    OutputTag,
    ProcessContext,
    RestartStrategy,
    StreamEnvironment,
)
from lockgate.engine.restore.loader import load_restored_state
from lockgate.engine.restore.resolve import RestoreSettings
from lockgate.engine.testing import AwaitCheckpoint, FailOnce
from tests.engine.jobs.savepoints import Topic, TopicSource
from tests.engine.jobs.unaligned import (
    GatedCollectSink,
    SlowCollectSink,
    checkpoint_when_full,
    filled_topic,
)

ODD = OutputTag[int]("odd")
FAILED = OutputTag[int]("failed")
RECORDS = 9_000
ALIGNMENTS: dict[str, dict[str, Any]] = {
    "aligned": {},
    "unaligned": {"unaligned": True},
    "aligned-timeout-0": {"unaligned": True, "aligned_timeout": 0.0},
}


def checkpointed_env(alignment: str) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=2, batch_size=64, channel_capacity=256)
    env.enable_checkpointing(0.005, **ALIGNMENTS[alignment])
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    return env


def numbers(fail: FailOnce | None = None) -> list[Any]:
    """Every number once; a checkpoint completes at 4,000, and ``fail`` fires at 6,000."""
    failures = [] if fail is None else [fail]
    return [
        *range(4_000),
        AwaitCheckpoint(),
        *range(4_000, 6_000),
        *failures,
        *range(6_000, RECORDS),
    ]


class SplitFailingOnce(KeyedProcessFunction[int, int, int]):
    """Emits even numbers, sends odd ones to ``odd``; fails once on record ``at``."""

    def __init__(self, fail: FailOnce, *, at: int) -> None:
        self.fail = fail
        self.at = at

    def process_element(self, value: int, ctx: ProcessContext[int]) -> Any:
        if value == self.at:
            self.fail.maybe_fire()
        if value % 2:
            ctx.output(ODD, value)
        else:
            yield value


@pytest.mark.parametrize("alignment", list(ALIGNMENTS))
@pytest.mark.parametrize("slow", ["side", "main"])
async def test_main_and_side_records_commit_exactly_once_and_in_order_across_a_failure(
    slow: str, alignment: str
) -> None:
    fail = FailOnce("the split failed")
    env = checkpointed_env(alignment)
    # The slow sink backpressures its output of the split, while the other one flows.
    main = SlowCollectSink() if slow == "main" else CollectSink()
    side = SlowCollectSink() if slow == "side" else CollectSink()
    split = (
        env.from_source(CollectionSource(numbers()), uid="numbers", parallelism=1)
        .key_by(lambda n: n % 10)
        .process(SplitFailingOnce(fail, at=6_000), uid="split")
    )
    split.sink_to(main, uid="main")
    split.side_output(ODD).key_by(lambda n: n % 10).sink_to(side, uid="side", parallelism=3)

    result = await env.execute("split")

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert result.metrics.attempt == 1
    assert sorted(main.results) == list(range(0, RECORDS, 2))
    for key in range(1, 10, 2):
        assert [n for n in side.results if n % 10 == key] == list(range(key, RECORDS, 10))


async def jittery_failing(record: int) -> int:
    for _ in range(record % 11):
        await anyio.lowlevel.checkpoint()
    if record % 7 == 0:
        raise ConnectionError(f"no answer for {record}")
    return record * 3


@pytest.mark.parametrize("alignment", list(ALIGNMENTS))
@pytest.mark.parametrize("ordered", [True, False], ids=["ordered", "unordered"])
async def test_failed_async_records_reach_the_side_sink_exactly_once_across_a_failure(
    ordered: bool, alignment: str
) -> None:
    fail = FailOnce()
    env = checkpointed_env(alignment)
    main, failed = CollectSink(), CollectSink()
    calls = env.from_source(
        CollectionSource(numbers(fail)),
        uid="numbers",
        parallelism=1,
    ).async_map(jittery_failing, capacity=150, ordered=ordered, on_failure=FAILED, uid="calls")
    calls.sink_to(main, uid="main")
    calls.side_output(FAILED).sink_to(failed, uid="failed")

    result = await env.execute("calls")

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert result.metrics.attempt == 1
    assert sorted(failed.results) == list(range(0, RECORDS, 7))
    assert sorted(main.results) == [n * 3 for n in range(RECORDS) if n % 7]


class AllToSide(KeyedProcessFunction[int, int, Any]):
    """Sends ``("side", n)`` to ``odd`` for every record; emits nothing on the main output."""

    def process_element(self, value: int, ctx: ProcessContext[int]) -> None:
        ctx.output(ODD, ("side", value))  # type: ignore[arg-type]


RESTORED = 3_000


def side_job(topic: Topic, sink: CollectSink[Any], storage: MemoryCheckpointStorage) -> Any:
    env = StreamEnvironment(parallelism=2, batch_size=16, channel_capacity=64)
    env.enable_checkpointing(None, unaligned=True)  # checkpoints only when triggered
    env.set_checkpoint_storage(storage)
    (
        env.from_source(TopicSource(topic), uid="numbers")
        .map(topic.passed, uid="passed")
        .key_by(lambda n: n % 7)
        .process(AllToSide(), uid="split")
        .side_output(ODD)
        .sink_to(sink, uid="side")
    )
    return env


async def checkpoint_of_a_full_side_edge(
    storage: MemoryCheckpointStorage,
) -> tuple[CompletedCheckpoint, StreamEnvironment]:
    """Run until the side sink's channels are full, take an unaligned checkpoint, cancel."""
    sink = GatedCollectSink()
    env = side_job(filled_topic(RESTORED), sink, storage)
    return await checkpoint_when_full(env, sink, "side"), env


async def side_edge_records(
    env: StreamEnvironment, storage: MemoryCheckpointStorage, checkpoint: CompletedCheckpoint
) -> int:
    """How many records the checkpoint holds in flight on the side edge, out of or into it."""
    plan = env.plan()
    (side_edge,) = [edge.edge_id for edge in plan.edges if edge.tag == ODD]
    restore = RestoreSettings(checkpoint.metadata, storage, "", own_checkpoint=True)
    restored = await load_restored_state(restore, plan, env.max_parallelism)
    channels = [
        (key, records)
        for uid in ("split", "side")
        for snapshot in restored[uid]
        for key, records in (*snapshot.output_channels.items(), *snapshot.input_channels.items())
    ]
    return sum(len(records) for key, records in channels if key.edge_id == side_edge)


async def test_an_unaligned_checkpoint_of_a_full_side_edge_restores_each_record_once() -> None:
    storage = MemoryCheckpointStorage()
    checkpoint, env = await checkpoint_of_a_full_side_edge(storage)
    in_flight = await side_edge_records(env, storage, checkpoint)
    topic = filled_topic(RESTORED)
    topic.close()
    sink: CollectSink[Any] = CollectSink()

    with anyio.fail_after(10):
        await side_job(topic, sink, storage).execute("side", restore_from=checkpoint.location)

    assert in_flight > 0
    assert sorted(n for _, n in sink.results) == list(range(RESTORED))
