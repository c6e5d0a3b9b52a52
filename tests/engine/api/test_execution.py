from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    JobStatus,
    KeyedProcessFunction,
    ProcessContext,
    RuntimeContext,
    StreamEnvironment,
    ValueStateDescriptor,
)
from tests.engine.jobs.basic import final_values


def keyed_sum_job(parallelism: int, n: int = 10_000) -> tuple[StreamEnvironment, CollectSink]:
    env = StreamEnvironment(parallelism=parallelism, batch_size=64, channel_capacity=256)
    sink = CollectSink()
    (
        env.from_source(CollectionSource(range(n)), uid="numbers")
        .map(lambda x: (x % 10, x))
        .key_by(lambda kv: kv[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="sums")
        .sink_to(sink, uid="out")
    )
    return env, sink


@pytest.mark.parametrize("parallelism", [1, 2, 4])
async def test_keyed_sums_are_identical_at_every_parallelism(parallelism: int) -> None:
    env, sink = keyed_sum_job(parallelism)

    await env.execute("sums")

    expected = {k: sum(range(k, 10_000, 10)) for k in range(10)}
    assert final_values(sink.results) == expected
    assert len(sink.results) == 10_000


@pytest.mark.parametrize("parallelism", [1, 2, 4])
async def test_stateless_pipeline_outputs_the_same_records_at_every_parallelism(
    parallelism: int,
) -> None:
    env = StreamEnvironment(parallelism=parallelism, batch_size=16, channel_capacity=64)
    sink = CollectSink()
    (
        env.from_source(CollectionSource(["a b", "c", "", "d e f"] * 50))
        .flat_map(str.split)
        .filter(lambda word: word != "c")
        .map(str.upper)
        .rebalance()
        .sink_to(sink)
    )

    await env.execute("words")

    assert Counter(sink.results) == Counter({"A": 50, "B": 50, "D": 50, "E": 50, "F": 50})


async def test_execute_returns_a_finished_result_with_metrics() -> None:
    env, _ = keyed_sum_job(2, n=1_000)

    result = await env.execute("sums")

    assert result.status is JobStatus.FINISHED
    assert result.job_name == "sums"
    assert sum(s.records_in for s in result.metrics.of("out")) == 1_000


class CountPerKey(KeyedProcessFunction[str, str, tuple[str, int]]):
    def open(self, context: RuntimeContext) -> None:
        self.count = context.get_state(ValueStateDescriptor[int]("count", default=0))

    def process_element(self, value: str, ctx: ProcessContext[str]) -> Any:
        self.count.update(self.count.value() + 1)
        yield (ctx.get_current_key(), self.count.value())


@pytest.mark.parametrize("parallelism", [1, 3])
async def test_process_function_keeps_a_value_per_key(parallelism: int) -> None:
    env = StreamEnvironment(parallelism=parallelism)
    sink = CollectSink()
    words = ["x", "y", "x", "z", "x", "y"] * 100
    (
        env.from_source(CollectionSource(words))
        .key_by(lambda word: word)
        .process(CountPerKey(), uid="counts")
        .sink_to(sink)
    )

    await env.execute("counts")

    assert final_values(sink.results) == {"x": 300, "y": 200, "z": 100}


async def test_process_function_may_return_none_to_emit_nothing() -> None:
    class Silent(KeyedProcessFunction[int, int, int]):
        def process_element(self, value: int, ctx: ProcessContext[int]) -> None:
            return None

    env = StreamEnvironment()
    sink = CollectSink()
    env.from_source(CollectionSource(range(10))).key_by(lambda x: x).process(Silent()).sink_to(sink)

    await env.execute("silent")

    assert sink.results == []


async def test_union_merges_every_record_of_both_streams() -> None:
    env = StreamEnvironment(parallelism=2)
    sink = CollectSink()
    evens = env.from_source(CollectionSource(range(0, 1_000, 2)), uid="evens")
    odds = env.from_source(CollectionSource(range(1, 1_000, 2)), uid="odds")
    evens.union(odds).map(lambda x: x).sink_to(sink)

    await env.execute("union")

    assert sorted(sink.results) == list(range(1_000))


async def test_broadcast_delivers_every_record_to_every_subtask() -> None:
    env = StreamEnvironment(parallelism=1)
    sink = CollectSink()
    env.from_source(CollectionSource(range(100))).broadcast().sink_to(sink, parallelism=3)

    await env.execute("broadcast")

    assert Counter(sink.results) == Counter({i: 3 for i in range(100)})


async def test_key_by_sends_each_key_to_exactly_one_subtask() -> None:
    env = StreamEnvironment(parallelism=4)
    seen: dict[str, set[int]] = {}

    class Where(KeyedProcessFunction[str, str, tuple[str, int]]):
        def open(self, context: RuntimeContext) -> None:
            self.index = context.subtask_index

        def process_element(self, value: str, ctx: ProcessContext[str]) -> Any:
            seen.setdefault(value, set()).add(self.index)
            return None

    keys = [f"key{i}" for i in range(200)] * 5
    env.from_source(CollectionSource(keys)).key_by(lambda k: k).process(Where()).sink_to(
        CollectSink()
    )

    await env.execute("where")

    assert len(seen) == 200
    assert all(len(indexes) == 1 for indexes in seen.values())
    assert len({i for indexes in seen.values() for i in indexes}) == 4


async def test_an_empty_source_finishes_cleanly() -> None:
    env = StreamEnvironment(parallelism=2)
    sink = CollectSink()
    env.from_source(CollectionSource([])).key_by(lambda x: x).reduce(max).sink_to(sink)

    result = await env.execute("empty")

    assert result.status is JobStatus.FINISHED
    assert sink.results == []


async def test_the_same_environment_can_run_its_job_twice() -> None:
    env, sink = keyed_sum_job(2, n=100)

    await env.execute("first")
    await env.execute("second")

    assert len(sink.results) == 200
