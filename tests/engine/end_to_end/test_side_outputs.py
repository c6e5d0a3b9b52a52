"""Side outputs: a process function splits its records with ``ctx.output``, an async_map sends
its failed records to ``on_failure=tag``; a side stream is a stream like any other."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    AsyncRetry,
    FunctionInitializationContext,
    FunctionSnapshotContext,
    KeyedProcessFunction,
    OperatorError,
    OutputTag,
    ProcessContext,
    StreamEnvironment,
)
from lockgate.engine.testing import AwaitCheckpoint
from tests.engine.jobs.async_io import Changes, HeldCalls, LoggingSink, in_flight_state, wait_until
from tests.engine.jobs.basic import final_values

ODD = OutputTag[int]("odd")
FAILED = OutputTag[int]("failed")
RECORDS = 1_000
EVENS = list(range(0, RECORDS, 2))
ODDS = list(range(1, RECORDS, 2))


class SplitOdd(KeyedProcessFunction[int, int, int]):
    """Emits even numbers; sends odd ones to the side output ``odd``."""

    def process_element(self, value: int, ctx: ProcessContext[int]) -> Any:
        if value % 2:
            ctx.output(ODD, value)
        else:
            yield value


def split_numbers(env: StreamEnvironment, numbers: list[Any] | None = None) -> Any:
    numbers = list(range(RECORDS)) if numbers is None else numbers
    source = env.from_source(CollectionSource(numbers), uid="numbers", parallelism=1)
    return source.key_by(lambda n: n % 10).process(SplitOdd(), uid="split")


@pytest.mark.parametrize("parallelism", [1, 2])
async def test_a_process_function_splits_its_records_between_main_and_side(
    parallelism: int,
) -> None:
    env = StreamEnvironment(parallelism=parallelism, batch_size=16)
    main, side = CollectSink(), CollectSink()
    split = split_numbers(env)
    split.sink_to(main, uid="main")
    split.side_output(ODD).sink_to(side, uid="side")

    await env.execute("split")

    assert sorted(main.results) == EVENS
    assert sorted(side.results) == ODDS


async def test_at_parallelism_one_side_records_keep_the_order_they_were_sent_in() -> None:
    env = StreamEnvironment(parallelism=1, batch_size=16)
    side = CollectSink()
    split_numbers(env).side_output(ODD).sink_to(side, uid="side")

    await env.execute("split")

    assert side.results == ODDS


async def test_a_side_stream_can_be_keyed_and_run_at_its_own_parallelism() -> None:
    env = StreamEnvironment(parallelism=2, batch_size=16)
    sums = CollectSink()
    (
        split_numbers(env)
        .side_output(ODD)
        .map(lambda n: (n % 3, n), uid="pair", parallelism=3)
        .key_by(lambda pair: pair[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]), uid="sums", parallelism=3)
        .sink_to(sums, uid="out", parallelism=3)
    )

    await env.execute("side-sums")

    assert env.plan().chain_of("pair").parallelism == 3
    assert final_values(sums.results) == {k: sum(n for n in ODDS if n % 3 == k) for k in range(3)}


async def test_an_equal_tag_made_anew_reads_the_same_side_output() -> None:
    env = StreamEnvironment(parallelism=2, batch_size=16)
    side = CollectSink()
    split_numbers(env).side_output(OutputTag("odd")).sink_to(side, uid="side")

    await env.execute("split")

    assert sorted(side.results) == ODDS


class SplitThree(KeyedProcessFunction[int, int, int]):
    """Sends multiples of 3 to ``three``, other odd numbers to ``odd``, evens to main."""

    def process_element(self, value: int, ctx: ProcessContext[int]) -> Any:
        if value % 3 == 0:
            ctx.output(OutputTag("three"), value)
        elif value % 2:
            ctx.output(ODD, value)
        else:
            yield value


async def test_side_outputs_and_a_main_output_nobody_reads_are_dropped() -> None:
    env = StreamEnvironment(parallelism=2, batch_size=16)
    side = CollectSink()
    (
        env.from_source(CollectionSource(range(RECORDS)), uid="numbers")
        .key_by(lambda n: n % 10)
        .process(SplitThree(), uid="split")
        .side_output(ODD)
        .sink_to(side, uid="side")
    )

    result = await env.execute("split")

    assert sorted(side.results) == [n for n in ODDS if n % 3]
    assert sum(s.records_out for s in result.metrics.of("split")) == len(side.results)


async def test_a_side_output_unioned_with_its_main_output_carries_both() -> None:
    env = StreamEnvironment(parallelism=2, batch_size=16)
    both = CollectSink()
    split = split_numbers(env)
    split.union(split.side_output(ODD)).map(lambda n: -n, uid="negate").sink_to(both, uid="out")

    await env.execute("union")

    assert sorted(both.results) == [-n for n in reversed(range(RECORDS))]


class OutputsAName(KeyedProcessFunction[int, int, int]):
    def process_element(self, value: int, ctx: ProcessContext[int]) -> Any:
        ctx.output("odd", value)  # type: ignore[arg-type]
        return None


async def test_output_to_a_name_instead_of_a_tag_fails_the_job_naming_the_operator() -> None:
    env = StreamEnvironment(parallelism=1)
    (
        env.from_source(CollectionSource([1]), uid="numbers")
        .key_by(abs)
        .process(OutputsAName(), uid="names")
        .side_output(ODD)
        .sink_to(CollectSink(), uid="side")
    )

    with pytest.raises(OperatorError, match="operator 'names'") as failure:
        await env.execute("names")

    assert "ctx.output() needs an OutputTag; got 'odd'" in str(failure.value.__cause__)


class SeenAt(dict[int, list[int]]):
    """The records processed before each checkpoint, by checkpoint id; shared, not copied."""

    def __deepcopy__(self, memo: dict[int, Any]) -> SeenAt:
        return self


class SplitAndRemember(SplitOdd):
    """``SplitOdd`` that remembers, at each checkpoint, the records it had processed."""

    def __init__(self, seen_at: SeenAt) -> None:
        self.seen_at = seen_at
        self.seen: list[int] = []

    def initialize_state(self, context: FunctionInitializationContext) -> None:
        """Nothing restored: the job does not fail."""

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        self.seen_at[context.checkpoint_id] = list(self.seen)

    def process_element(self, value: int, ctx: ProcessContext[int]) -> Any:
        self.seen.append(value)
        return super().process_element(value, ctx)


async def test_side_records_sent_before_a_barrier_reach_the_sink_before_it() -> None:
    seen_at = SeenAt()
    env = StreamEnvironment(parallelism=1, batch_size=16)
    env.enable_checkpointing(0.001)
    side = LoggingSink(Changes())
    numbers = [*range(RECORDS // 2), AwaitCheckpoint(), *range(RECORDS // 2, RECORDS)]
    (
        env.from_source(CollectionSource(numbers), uid="numbers")
        .key_by(lambda n: n % 10)
        .process(SplitAndRemember(seen_at), uid="split")
        .side_output(ODD)
        .sink_to(side, uid="side")
    )

    await env.execute("barriers")

    barriers = [entry for entry in side.log if isinstance(entry, tuple)]
    assert any(0 < len(seen_at[c]) < RECORDS for _, c in barriers)  # one barrier mid-stream
    for entry in barriers:
        before = side.log[: side.log.index(entry)]
        assert [r for r in before if isinstance(r, int)] == [n for n in seen_at[entry[1]] if n % 2]


class FailsOnFives:
    """Fails every call for a multiple of 5; doubles the others. Counts the calls."""

    def __init__(self) -> None:
        self.calls: dict[int, int] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> FailsOnFives:
        return self

    async def __call__(self, record: int) -> int:
        self.calls[record] = self.calls.get(record, 0) + 1
        for _ in range(record % 4):  # complete out of input order
            await anyio.lowlevel.checkpoint()
        if record % 5 == 0:
            raise ConnectionError(f"no answer for {record}")
        return record * 2


@pytest.mark.parametrize("ordered", [True, False], ids=["ordered", "unordered"])
async def test_async_map_sends_exactly_the_records_whose_calls_failed_to_its_side_output(
    ordered: bool,
) -> None:
    service = FailsOnFives()
    env = StreamEnvironment(parallelism=1, batch_size=16)
    main, failed = CollectSink(), CollectSink()
    retry = AsyncRetry(attempts=3, initial_backoff=0.0, jitter=0.0)
    calls = env.from_source(CollectionSource(range(RECORDS)), uid="numbers").async_map(
        service, capacity=50, ordered=ordered, retry=retry, on_failure=FAILED, uid="calls"
    )
    calls.sink_to(main, uid="main")
    calls.side_output(FAILED).sink_to(failed, uid="failed")

    result = await env.execute("calls")

    fives = list(range(0, RECORDS, 5))
    (metrics,) = result.metrics.async_io("calls")
    assert (metrics.failures, metrics.retries) == (len(fives), 2 * len(fives))
    assert {service.calls[n] for n in fives} == {3}
    assert (sorted(failed.results), sorted(main.results)) == (
        fives,
        [n * 2 for n in range(RECORDS) if n % 5],
    )
    if ordered:
        assert failed.results == fives


async def test_failed_records_of_a_side_output_nobody_reads_are_dropped() -> None:
    env = StreamEnvironment(parallelism=2, batch_size=16)
    main = CollectSink()
    (
        env.from_source(CollectionSource(range(RECORDS)), uid="numbers")
        .async_map(FailsOnFives(), on_failure=FAILED, uid="calls")
        .sink_to(main, uid="main")
    )

    result = await env.execute("calls")

    assert sorted(main.results) == [n * 2 for n in range(RECORDS) if n % 5]
    assert sum(m.failures for m in result.metrics.async_io("calls")) == RECORDS // 5


def fails_on_one(record: int) -> int:
    if record == 1:
        raise ConnectionError("no answer for 1")
    return record * 10


async def test_a_failed_record_waits_in_checkpointed_state_for_the_results_before_it() -> None:
    changes = Changes()
    calls = HeldCalls(changes, result=fails_on_one)
    env = StreamEnvironment(parallelism=1)
    env.enable_checkpointing(None)  # checkpoints only when the test triggers one
    main, failed = CollectSink(), LoggingSink(changes)
    stream = env.from_source(CollectionSource([0, 1]), uid="numbers").async_map(
        calls, on_failure=FAILED, uid="calls"
    )
    stream.sink_to(main, uid="main")
    stream.side_output(FAILED).sink_to(failed, uid="failed")

    async with env.start("ordered") as job:
        await calls.wait_started(2)
        calls.release(1)
        await wait_until(lambda: job.metrics().async_io("calls")[0].failures == 1)
        checkpoint = await job.trigger_checkpoint()
        logged_at_checkpoint = list(failed.log)
        in_flight = await in_flight_state(env, checkpoint, "calls")
        calls.release(0)
        await job.wait()

    assert logged_at_checkpoint == [("barrier", checkpoint.checkpoint_id)]
    assert in_flight == [[0, 1]]
    assert (main.results, failed.records) == ([0], [1])


def always_fails(record: int) -> int:
    raise ConnectionError(f"no answer for {record}")


async def test_a_failed_record_is_before_a_barrier_or_in_its_checkpoint_never_neither() -> None:
    # Released just before the trigger, the call fails as the checkpoint is taken: the
    # snapshot either takes its side record along (before the barrier) or keeps its input.
    changes = Changes()
    calls = HeldCalls(changes, result=always_fails)
    env = StreamEnvironment(parallelism=1)
    env.enable_checkpointing(None)
    failed = LoggingSink(changes)
    (
        env.from_source(CollectionSource([0, 1]), uid="numbers")
        .async_map(calls, on_failure=FAILED, uid="calls")
        .side_output(FAILED)
        .sink_to(failed, uid="failed")
    )

    async with env.start("racing") as job:
        await calls.wait_started(2)
        calls.release(0)
        checkpoint = await job.trigger_checkpoint()
        before_barrier = failed.log[: failed.log.index(("barrier", checkpoint.checkpoint_id))]
        (in_flight,) = await in_flight_state(env, checkpoint, "calls")
        calls.release(1)
        await job.wait()

    assert (before_barrier, in_flight) in [([0], [1]), ([], [0, 1])]
    assert failed.records == [0, 1]
