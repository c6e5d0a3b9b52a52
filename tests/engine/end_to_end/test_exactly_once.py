"""Exactly-once under failure, as Flink tests it: one failure injected deterministically after
at least one completed checkpoint, a guard that fails the test if it never fired, results
counted outside operator state (by a transactional sink), exact sets asserted."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    CheckpointingMode,
    Executor,
    KeyedProcessFunction,
    ProcessContext,
    RestartStrategy,
    RuntimeContext,
    StreamEnvironment,
    ValueStateDescriptor,
)
from lockgate.engine.testing import AwaitCheckpoint, FailOnce

PREFIXES = 40


def checkpointed_env(parallelism: int, mode: CheckpointingMode) -> StreamEnvironment:
    env = StreamEnvironment(parallelism=parallelism, batch_size=256, channel_capacity=1024)
    env.enable_checkpointing(0.02, mode=mode)
    env.set_restart_strategy(RestartStrategy.fixed_delay(attempts=3, delay=0.0))
    return env


class FailingCounter(KeyedProcessFunction[str, str, tuple[str, int]]):
    """Counts per prefix; one subtask fails once, at a point between 40% and 70% of its
    share, but only after a checkpoint of this attempt completed."""

    def __init__(self, fail: FailOnce, share: int, seed: int) -> None:
        self.fail = fail
        self.share = share
        self.seed = seed

    def open(self, context: RuntimeContext) -> None:
        self.count = context.get_state(ValueStateDescriptor[int]("count", default=0))
        low, high = int(self.share * 0.4), int(self.share * 0.7)
        self.fail_at = random.Random(self.seed + context.subtask_index).randint(low, high)
        self.seen = 0
        self.checkpointed = False

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.checkpointed = True

    def process_element(self, value: str, ctx: ProcessContext[str]) -> Any:
        self.seen += 1
        if self.seen >= self.fail_at and self.checkpointed:
            self.fail.maybe_fire()
        count = self.count.value() + 1
        self.count.update(count)
        yield (ctx.get_current_key(), count)


def prefixed_strings() -> list[Any]:
    """400,000 strings over 40 prefixes; each source split waits for a checkpoint at 30%."""
    strings: list[Any] = [f"p{i % PREFIXES:02d}-{i}" for i in range(400_000)]
    for quarter in reversed(range(4)):
        strings.insert(quarter * 100_000 + 30_000, AwaitCheckpoint())
    return strings


async def run_counting_job(
    mode: CheckpointingMode,
    *,
    configure: Callable[[StreamEnvironment], None] = lambda env: None,
    executor: Executor | None = None,
) -> tuple[dict[str, list[int]], FailOnce]:
    """Run the counting job; ``configure`` sets storage or state backend, ``executor`` runs it."""
    fail = FailOnce()
    env = checkpointed_env(4, mode)
    configure(env)
    sink = CollectSink()
    (
        env.from_source(CollectionSource(prefixed_strings()), uid="strings")
        .filter(lambda s: s.startswith("p"), uid="only-prefixed")
        .map(lambda s: s.split("-")[0], uid="prefix")
        .key_by(lambda prefix: prefix)
        .process(FailingCounter(fail, share=100_000, seed=7), uid="counter")
        .sink_to(sink, uid="counts")
    )

    await env.execute("prefix-counts", executor=executor)

    committed: dict[str, list[int]] = defaultdict(list)
    for prefix, count in sink.results:
        committed[prefix].append(count)
    return committed, fail


async def test_every_prefix_is_counted_exactly_once_across_a_failure() -> None:
    committed, fail = await run_counting_job(CheckpointingMode.EXACTLY_ONCE)

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    assert sorted(committed) == [f"p{k:02d}" for k in range(PREFIXES)]
    for prefix, counts in committed.items():
        assert counts == list(range(1, 10_001)), f"{prefix}: not exactly 1..10000"


async def test_at_least_once_mode_loses_no_prefix_count() -> None:
    committed, fail = await run_counting_job(CheckpointingMode.AT_LEAST_ONCE)

    assert fail.fired, "the injected failure never fired: the test proves nothing"
    for prefix in (f"p{k:02d}" for k in range(PREFIXES)):
        assert set(range(1, 10_001)) <= set(committed[prefix])


def add(a: tuple[int, int, int], b: tuple[int, int, int]) -> tuple[int, int, int]:
    return (a[0], a[1] + b[1], a[2] + b[2])


def union_sums_job(
    env: StreamEnvironment, fail: FailOnce, sink: CollectSink[tuple[int, int, int]]
) -> None:
    """Two sources, unioned, summed per key; the first fails once after a checkpoint."""
    # the first source fails once, 500 records after a checkpoint completed; it is read by one
    # subtask: split in two, the failure would begin the second split, before any checkpoint
    numbers = [*range(2_000), AwaitCheckpoint(), *range(2_000, 2_500), fail, *range(2_500, 5_000)]
    first = env.from_source(CollectionSource(numbers), uid="first", parallelism=1)
    second = env.from_source(CollectionSource(range(5_000, 10_000)), uid="second")
    (
        first.union(second)
        .map(lambda value: (value % 40, value % 40, 1), uid="to-triple")
        .key_by(lambda triple: triple[0])
        .reduce(add, uid="sums")
        .sink_to(sink, uid="out")
    )


def check_union_sums(
    mode: CheckpointingMode, fail: FailOnce, sink: CollectSink[tuple[int, int, int]]
) -> None:
    """Every key's sum exact (exactly-once), or at least every record counted."""
    assert fail.fired, "the injected failure never fired: the test proves nothing"
    final = {key: (total, count) for key, total, count in sink.results}
    assert sorted(final) == list(range(40))
    if mode is CheckpointingMode.EXACTLY_ONCE:
        assert final == {k: (250 * k, 250) for k in range(40)}
        assert len(sink.results) == 10_000
    else:
        assert all(total >= 250 * k and count >= 250 for k, (total, count) in final.items())


@pytest.mark.parametrize("mode", list(CheckpointingMode))
async def test_two_unioned_sources_sum_every_key_exactly(mode: CheckpointingMode) -> None:
    fail, sink = FailOnce(), CollectSink[tuple[int, int, int]]()
    env = checkpointed_env(2, mode)
    union_sums_job(env, fail, sink)

    await env.execute("union-sums")

    check_union_sums(mode, fail, sink)
