"""Timestamps on records (Flink's StreamRecord): given by a watermark strategy, kept by all.

Each test drops the field the event time was read from before the operator that needs it,
so only the timestamp the record carries can give the right answer.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

import anyio.lowlevel
import pytest

from lockgate.connectors import CollectionSource, CollectSink
from lockgate.engine import (
    BroadcastContext,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    MapStateDescriptor,
    OperatorError,
    OutputTag,
    ProcessContext,
    ProcessWindowFunction,
    ReadOnlyBroadcastContext,
    StreamEnvironment,
    TimeWindow,
    TumblingEventTimeWindows,
    WatermarkStrategy,
    WindowContext,
)
from tests.engine.jobs.timestamps import BY_TIME, Event, events, stamps_of

Keyed = tuple[str, int]  # (key, value): the event without its time


def env(parallelism: int = 2) -> StreamEnvironment:
    return StreamEnvironment(parallelism=parallelism, auto_watermark_interval=0.0)


def drop_time(event: Event) -> Keyed:
    return event[0], event[2]


def tumbling_sums(pairs: list[tuple[float, Keyed]], size: float) -> Counter[tuple[Any, ...]]:
    """``(key, window start, sum, count)`` of each window, by a plain loop over timed pairs."""
    held: dict[tuple[str, float], list[int]] = defaultdict(list)
    for time, (key, value) in pairs:
        held[(key, math.floor(time / size) * size)].append(value)
    return Counter((key, start, sum(v), len(v)) for (key, start), v in held.items())


class Sums(ProcessWindowFunction[Keyed, tuple[Any, ...], str]):
    """Emits ``(key, start, sum, count)`` per firing."""

    def process(
        self, key: str, context: WindowContext, elements: list[Keyed]
    ) -> Iterator[tuple[Any, ...]]:
        window = context.window
        assert isinstance(window, TimeWindow)
        yield key, window.start, sum(v for _, v in elements), len(elements)


def window_sums(stream: Any, size: float, uid: str = "sums") -> Any:
    """Per key and tumbling window of ``size``: ``(key, start, sum, count)``."""
    return (
        stream.key_by(lambda pair: pair[0])
        .window(TumblingEventTimeWindows.of(size))
        .process(Sums(), uid=uid)
    )


async def slowly(pair: Keyed) -> Keyed:
    """The identity, after letting the loop run: calls complete out of order."""
    for _ in range(pair[1] % 3):
        await anyio.lowlevel.checkpoint()
    return pair


async def test_a_timestamp_survives_map_flat_map_unordered_async_map_and_union() -> None:
    job, sink = env(), CollectSink[Any]()
    first, second = events(400), events(200, seed=2, start=1.0)
    mapped = (
        job.from_source(CollectionSource(first), uid="first", watermark_strategy=BY_TIME)
        .map(drop_time, uid="drop-time")
        .flat_map(lambda pair: [pair, (pair[0], pair[1] * 1000)], uid="twice")
        .async_map(slowly, ordered=False, uid="slowly")
    )
    other = job.from_source(CollectionSource(second), uid="second", watermark_strategy=BY_TIME).map(
        drop_time, uid="drop-time-2"
    )
    window_sums(mapped.union(other), 5.0).sink_to(sink, uid="out")

    await job.execute("survives")

    timed = [(t, (k, v)) for k, t, v in first] + [(t, (k, v * 1000)) for k, t, v in first]
    timed += [(t, (k, v)) for k, t, v in second]
    assert Counter(sink.results) == tumbling_sums(timed, 5.0)


async def test_a_window_after_a_map_needs_no_timestamp() -> None:
    job, sink = env(), CollectSink[Any]()
    source = job.from_source(CollectionSource(events(300)), uid="e", watermark_strategy=BY_TIME)
    window_sums(source.map(drop_time, uid="drop-time"), 10.0).sink_to(sink, uid="out")

    await job.execute("after-a-map")

    timed = [(t, (k, v)) for k, t, v in events(300)]
    assert Counter(sink.results) == tumbling_sums(timed, 10.0)


async def test_a_process_function_reads_the_records_timestamp() -> None:
    job, sink = env(), CollectSink[Any]()
    source = job.from_source(CollectionSource(events(50)), uid="e", watermark_strategy=BY_TIME)
    stamps_of(source.map(drop_time, uid="drop-time")).sink_to(sink, uid="out")

    await job.execute("ctx-timestamp")

    assert sorted(sink.results) == sorted(((k, v), t) for k, t, v in events(50))


class Deferred(KeyedProcessFunction[str, Keyed, tuple[str, str, float | None]]):
    """Per record, an event-time timer 100 s later; each timer emits its own timestamp."""

    def process_element(self, value: Keyed, ctx: ProcessContext[str]) -> None:
        timestamp = ctx.timestamp()
        assert timestamp is not None
        ctx.timer_service().register_event_time_timer(timestamp + 100.0)

    def on_timer(
        self, timestamp: float, ctx: ProcessContext[str]
    ) -> Iterator[tuple[str, str, float | None]]:
        yield ctx.get_current_key(), "timer", ctx.timestamp()


async def test_an_event_time_timer_sees_and_stamps_its_own_time() -> None:
    job, sink = env(parallelism=1), CollectSink[Any]()
    timed = [("a", 1.0, 1), ("b", 2.0, 2), ("a", 3.0, 3)]
    (
        stamps_of(
            job.from_source(CollectionSource(timed), uid="e", watermark_strategy=BY_TIME)
            .map(drop_time, uid="drop-time")
            .key_by(lambda pair: pair[0])
            .process(Deferred(), uid="deferred")
        ).sink_to(sink, uid="out")
    )

    await job.execute("timers")

    assert sorted(sink.results) == [
        (("a", "timer", 101.0), 101.0),
        (("a", "timer", 103.0), 103.0),
        (("b", "timer", 102.0), 102.0),
    ]


class Postpone(KeyedProcessFunction[str, Keyed, Keyed]):
    """Emits each record 100 s of event time later than it happened."""

    def process_element(self, value: Keyed, ctx: ProcessContext[str]) -> None:
        timestamp = ctx.timestamp()
        assert timestamp is not None
        ctx.collect_with_timestamp(value, timestamp + 100.0)


async def test_collect_with_timestamp_gives_a_record_the_time_a_window_reads() -> None:
    job, sink = env(), CollectSink[Any]()
    postponed = (
        job.from_source(CollectionSource(events(200)), uid="e", watermark_strategy=BY_TIME)
        .map(drop_time, uid="drop-time")
        .key_by(lambda pair: pair[0])
        .process(Postpone(), uid="postpone")
    )
    window_sums(postponed, 10.0).sink_to(sink, uid="out")

    await job.execute("collect-with-timestamp")

    timed = [(t + 100.0, (k, v)) for k, t, v in events(200)]
    assert Counter(sink.results) == tumbling_sums(timed, 10.0)


ODD = OutputTag[Keyed]("odd")


class SplitOdd(KeyedProcessFunction[str, Keyed, Keyed]):
    """Even values on the main output, odd ones on side output ``ODD``."""

    def process_element(self, value: Keyed, ctx: ProcessContext[str]) -> Iterator[Keyed]:
        if value[1] % 2:
            ctx.output(ODD, value)
        else:
            yield value


async def test_a_side_output_keeps_the_timestamp_of_its_input() -> None:
    job, sink = env(), CollectSink[Any]()
    split = (
        job.from_source(CollectionSource(events(60)), uid="e", watermark_strategy=BY_TIME)
        .map(drop_time, uid="drop-time")
        .key_by(lambda pair: pair[0])
        .process(SplitOdd(), uid="split")
    )
    stamps_of(split.side_output(ODD)).sink_to(sink, uid="out")
    split.sink_to(CollectSink[Any](), uid="evens")

    await job.execute("side-outputs")

    assert sorted(sink.results) == sorted(((k, v), t) for k, t, v in events(60) if v % 2)


async def test_window_results_carry_the_max_timestamp_of_their_window() -> None:
    job, sink = env(), CollectSink[Any]()
    source = job.from_source(CollectionSource(events(100)), uid="e", watermark_strategy=BY_TIME)
    stamps_of(window_sums(source.map(drop_time, uid="drop-time"), 5.0)).sink_to(sink, uid="out")

    await job.execute("max-timestamp")

    assert sink.results
    assert all(stamp == math.nextafter(r[1] + 5.0, -math.inf) for r, stamp in sink.results)


async def test_a_window_over_window_results_sums_them_as_one_larger_window_would() -> None:
    job, sink = env(), CollectSink[Any]()
    source = job.from_source(CollectionSource(events(400)), uid="e", watermark_strategy=BY_TIME)
    per_5s = window_sums(source.map(drop_time, uid="drop-time"), 5.0)
    counts = per_5s.map(lambda result: (result[0], result[3]), uid="counts")
    window_sums(counts, 20.0, uid="per-20s").sink_to(sink, uid="out")

    await job.execute("windows-of-windows")

    direct = tumbling_sums([(t, (k, 1)) for k, t, _ in events(400)], 20.0)
    assert Counter((key, start, total) for key, start, total, _ in sink.results) == Counter(
        (key, start, total) for key, start, total, _ in direct.elements()
    )


async def test_assigning_timestamps_again_replaces_them() -> None:
    job, sink = env(parallelism=1), CollectSink[Any]()
    later = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event: event[1] + 1000.0
    )
    (
        stamps_of(
            job.from_source(CollectionSource(events(20)), uid="e", watermark_strategy=BY_TIME)
            .assign_timestamps_and_watermarks(later, uid="later")
            .map(drop_time, uid="drop-time")
        ).sink_to(sink, uid="out")
    )

    await job.execute("restamped")

    assert sorted(sink.results) == sorted(((k, v), t + 1000.0) for k, t, v in events(20))


async def test_a_union_input_without_event_time_carries_no_timestamp() -> None:
    job, sink = env(), CollectSink[Any]()
    stamped = job.from_source(CollectionSource(events(10)), uid="e", watermark_strategy=BY_TIME)
    plain = job.from_source(CollectionSource(events(5, seed=9)), uid="plain")
    stamps_of(stamped.union(plain).map(drop_time, uid="drop-time")).sink_to(sink, uid="out")

    await job.execute("mixed")

    expected = [((k, v), t) for k, t, v in events(10)] + [
        ((k, v), None) for k, _, v in events(5, seed=9)
    ]
    assert Counter(sink.results) == Counter(expected)


async def test_a_record_without_a_timestamp_fails_an_event_time_window_naming_both() -> None:
    job = env(parallelism=1)
    stamped = job.from_source(CollectionSource(events(10)), uid="e", watermark_strategy=BY_TIME)
    plain = job.from_source(CollectionSource([("k0", 1.0, 7)]), uid="plain")
    mixed = stamped.union(plain).map(drop_time, uid="drop-time")
    window_sums(mixed, 5.0, uid="windows").sink_to(CollectSink[Any](), uid="out")

    with pytest.raises(OperatorError) as failure:
        await job.execute("mixed-window")

    assert failure.value.uid == "windows"
    assert "record ('k0', 7) carries the timestamp None" in str(failure.value.__cause__)


async def test_a_stream_without_event_time_carries_no_timestamps() -> None:
    job, sink = env(), CollectSink[Any]()
    source = job.from_source(CollectionSource(events(10)), uid="plain")
    stamps_of(source.map(drop_time, uid="drop-time")).sink_to(sink, uid="out")

    await job.execute("no-event-time")

    assert sorted(sink.results) == sorted(((k, v), None) for k, _, v in events(10))


class BothInputs(KeyedCoProcessFunction[str, Keyed, Keyed, tuple[str, float | None]]):
    """Emits which input each record came by, stamped as it came."""

    def process_element1(
        self, value: Keyed, ctx: ProcessContext[str]
    ) -> Iterator[tuple[str, float | None]]:
        yield "first", ctx.timestamp()

    def process_element2(
        self, value: Keyed, ctx: ProcessContext[str]
    ) -> Iterator[tuple[str, float | None]]:
        yield "second", ctx.timestamp()


async def test_connected_streams_keep_the_timestamps_of_both_inputs() -> None:
    job, sink = env(), CollectSink[Any]()
    first = job.from_source(CollectionSource(events(20)), uid="a", watermark_strategy=BY_TIME)
    second = job.from_source(
        CollectionSource(events(10, start=500.0)), uid="b", watermark_strategy=BY_TIME
    )
    connected = (
        first.map(drop_time, uid="drop-a")
        .connect(second.map(drop_time, uid="drop-b"))
        .key_by(lambda pair: pair[0], lambda pair: pair[0])
        .process(BothInputs(), uid="both")
    )
    stamps_of(connected).sink_to(sink, uid="out")

    await job.execute("connected")

    expected = [(("first", t), t) for _, t, _ in events(20)]
    expected += [(("second", t), t) for _, t, _ in events(10, start=500.0)]
    assert Counter(sink.results) == Counter(expected)


RULES = MapStateDescriptor[str, float]("rules")


class Rules(KeyedBroadcastProcessFunction[str, Keyed, str, tuple[str, float | None]]):
    """Emits each broadcast rule with its timestamp, and each keyed record with its."""

    def process_element(
        self, value: Keyed, ctx: ReadOnlyBroadcastContext[str]
    ) -> Iterator[tuple[str, float | None]]:
        yield "keyed", ctx.timestamp()

    def process_broadcast_element(
        self, value: str, ctx: BroadcastContext
    ) -> Iterator[tuple[str, float | None]]:
        yield value, ctx.timestamp()


async def test_a_broadcast_record_keeps_its_timestamp() -> None:
    job, sink = env(parallelism=1), CollectSink[Any]()
    by_second = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda rule: rule[1]
    )
    rules = job.from_source(
        CollectionSource([("limit", 7.0), ("cap", 9.0)]), uid="r", watermark_strategy=by_second
    ).map(lambda rule: rule[0], uid="name")
    keyed = job.from_source(CollectionSource(events(3)), uid="e", watermark_strategy=BY_TIME)
    applied = (
        keyed.map(drop_time, uid="drop-time")
        .key_by(lambda pair: pair[0])
        .connect(rules.broadcast(RULES))
        .process(Rules(), uid="rules")
    )
    stamps_of(applied).sink_to(sink, uid="out")

    await job.execute("broadcast")

    expected = [(("keyed", t), t) for _, t, _ in events(3)]
    expected += [(("limit", 7.0), 7.0), (("cap", 9.0), 9.0)]
    assert Counter(sink.results) == Counter(expected)


LATE = OutputTag[Keyed]("late")


async def test_a_record_too_late_for_its_window_goes_aside_with_its_timestamp() -> None:
    job = StreamEnvironment(parallelism=1, batch_size=1, auto_watermark_interval=0.0)
    sink = CollectSink[Any]()
    monotonous = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event: event[1]
    )
    timed = [("a", 1.0, 1), ("a", 12.0, 2), ("a", 3.0, 3)]  # 3.0 comes after [0, 10) fired
    windowed = (
        job.from_source(CollectionSource(timed), uid="e", watermark_strategy=monotonous)
        .map(drop_time, uid="drop-time")
        .key_by(lambda pair: pair[0])
        .window(TumblingEventTimeWindows.of(10.0))
        .side_output_late_data(LATE)
        .process(Sums(), uid="sums")
    )
    windowed.sink_to(CollectSink[Any](), uid="out")
    stamps_of(windowed.side_output(LATE)).sink_to(sink, uid="late")

    await job.execute("late")

    assert sink.results == [(("a", 3), 3.0)]
